import ts from 'typescript';
import type { Violation } from './guards.js';
import type { SourceFile } from './source-tree.js';
import { forEachNode, lineOf, parse } from './syntax.js';

/**
 * A mechanism the project writes once: the file that defines it, the names it defines there, and
 * the names a second copy would likely go by. A declaration elsewhere named like it is a second
 * definition, unless it only hands on to the one (`delegate`).
 */
export interface Mechanism {
  readonly mechanism: string;
  /** The one file that defines it. */
  readonly home: string;
  /** The names it is defined by in {@link home}. */
  readonly defined: readonly string[];
  /** Names of a declaration that would be a copy. */
  readonly looksLike: RegExp;
  /** A call a declaration of such a name may make to count as handing on (besides {@link defined}). */
  readonly delegatesTo?: readonly string[];
  /** Declarations named like it that are another thing, each with why (`file:name`). */
  readonly otherThings?: Readonly<Record<string, string>>;
}

/** The mechanisms of issue 18's "small helpers written several times", each with its one home. */
export const MECHANISMS: readonly Mechanism[] = [
  {
    mechanism: 'is-under',
    home: 'packages/api-reach/src/path.ts',
    defined: ['pathIsUnder', 'isUnder'],
    looksLike: /^(is|lies)?(path)?(is|lies)?(under|within|inside|beneath|below)$/i,
    otherThings: {
      'packages/sandbox-linux/src/safe-move.ts:liesUnder': 'whether an open directory (by fd, device and inode) lies under another: the kernel objects, not path text',
    },
  },
  {
    mechanism: 'the bounded output buffer',
    home: 'packages/api-reach/src/bounded-output.ts',
    defined: ['BoundedOutput'],
    looksLike: /^(bounded|capped|limited|truncating)(output|buffer|stream)|^output(buffer|cap|limit)$/i,
  },
  {
    mechanism: 'the atomic writer',
    home: 'packages/core/src/safe-file.ts',
    defined: ['writeFileAtomic', 'copyFileAtomic'],
    looksLike: /atomic/i,
  },
  {
    mechanism: 'run-request validation',
    home: 'packages/api-reach/src/parse-run-request.ts',
    defined: ['parseRunRequest'],
    looksLike: /^(parse|check|validate|verify|assert)\w*RunRequest$/i,
  },
  {
    mechanism: 'the HTTP helpers',
    home: 'packages/core/src/http-answer.ts',
    defined: ['sendJson', 'sendErrorAnswer', 'readJsonBody', 'validBody', 'httpStatusOf', 'HTTP_STATUS_BY_CODE'],
    looksLike: /^(sendJson|send\w*Error\w*|readJson\w*|jsonBody|httpStatus\w*|HTTP_STATUS\w*|\w*STATUS_OF\w*|API_ERRORS)$/,
  },
  {
    mechanism: 'the error envelope',
    home: 'packages/core/src/aalis-error.ts',
    defined: ['errorEnvelope', 'readErrorEnvelope', 'ErrorEnvelopeSchema', 'ErrorEnvelope'],
    looksLike: /error\w*envelope/i,
  },
  {
    // node's own parser is the one; a command's reader of its flags hands on to it
    mechanism: 'the argument parser',
    home: 'node:util',
    defined: [],
    looksLike: /^(parse|take|read|split)\w*(args|argv|flags?|options)$/i,
    delegatesTo: ['parseArgs'],
  },
  { mechanism: 'RISK_LEVELS', home: 'packages/core/src/tools.ts', defined: ['RISK_LEVELS'], looksLike: /^RISK_LEVELS$/i },
  { mechanism: 'TOOL_ERROR_KINDS', home: 'packages/core/src/tools.ts', defined: ['TOOL_ERROR_KINDS'], looksLike: /^TOOL_ERROR_KINDS$/i },
];

/** Tests, their helpers and benchmarks: they may model a mechanism to check the real one. */
function isTestCode(file: SourceFile): boolean {
  const inside = file.display.split('/').slice(2);
  return /\.(test|testing|bench)\.[cm]?[tj]sx?$/.test(file.display) || inside[0] === 'test' || inside[0] === 'bench';
}

/**
 * A search of the shipped tree for a second definition of each of {@link MECHANISMS}: a function,
 * class, method or constant named like one outside its home (unless all it does is call the one),
 * and the is-under test written inline (`p === r || p.startsWith(`${r}/`)`).
 */
export function checkOneMechanism(files: readonly SourceFile[]): Violation[] {
  const violations: Violation[] = [];
  for (const file of files) {
    if (isTestCode(file)) continue;
    const tree = parse(file.path, file.text);
    const jsRealpath = jsRealpathNames(tree);
    forEachNode(tree, (node) => {
      if (isJsRealpathCall(node, jsRealpath)) {
        violations.push({
          rule: 'one-mechanism',
          file: file.display,
          line: lineOf(tree, node),
          message: "node:fs's JS realpath, which answers a symlink, not the real path, when a chain of two links ends at a FIFO or a socket; call realpathSync.native (or node:fs/promises' realpath), the kernel's answer.",
        });
      }
      const named = declarationName(node);
      if (named !== undefined) {
        for (const m of MECHANISMS) {
          if (!m.looksLike.test(named)) continue;
          if (file.display === m.home && m.defined.includes(named)) continue;
          if (m.otherThings?.[`${file.display}:${named}`] !== undefined) continue;
          if (handsOn(node, [...m.defined, ...(m.delegatesTo ?? [])])) continue;
          violations.push({
            rule: 'one-mechanism',
            file: file.display,
            line: lineOf(tree, node),
            message: `'${named}' is a second definition of ${m.mechanism}, which ${m.home === 'node:util' ? "node's util.parseArgs" : m.home} already defines (${m.defined.join(', ') || 'parseArgs'}); use that one (or only call it from here).`,
          });
        }
      }
      if (isInlineIsUnder(node)) {
        violations.push({
          rule: 'one-mechanism',
          file: file.display,
          line: lineOf(tree, node),
          message: "an inline is-under test (`p === r || p.startsWith(r + '/')`), which is wrong for the root '/'; use api-reach's pathIsUnder.",
        });
      }
    });
  }
  return violations;
}

/**
 * The names this file gives node:fs's JS realpath (`realpathSync`, the callback `realpath`) and
 * node:fs itself (`import * as fs`, `import fs`): the walk in JS that reads a stat buffer shared
 * with every other plain stat, so a link chain to a FIFO or socket comes back unresolved.
 */
function jsRealpathNames(tree: ts.SourceFile): { direct: Set<string>; module: Set<string> } {
  const direct = new Set<string>();
  const module = new Set<string>();
  for (const statement of tree.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (statement.moduleSpecifier.text !== 'node:fs' && statement.moduleSpecifier.text !== 'fs') continue;
    const clause = statement.importClause;
    if (clause?.name !== undefined) module.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings === undefined) continue;
    if (ts.isNamespaceImport(bindings)) module.add(bindings.name.text);
    else for (const element of bindings.elements) if (['realpathSync', 'realpath'].includes((element.propertyName ?? element.name).text)) direct.add(element.name.text);
  }
  return { direct, module };
}

/** A call of node:fs's JS realpath: `realpathSync(p)`, `fs.realpathSync(p)`, `fs.realpath(p, cb)`; `.native` is the kernel's. */
function isJsRealpathCall(node: ts.Node, names: { direct: Set<string>; module: Set<string> }): boolean {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return names.direct.has(callee.text);
  return ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && names.module.has(callee.expression.text) && ['realpathSync', 'realpath'].includes(callee.name.text);
}

function declarationName(node: ts.Node): string | undefined {
  if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isMethodDeclaration(node)) && node.name && ts.isIdentifier(node.name)) return node.name.text;
  // a variable is a definition when it holds code, or is a constant table (RISK_LEVELS); `const inside = …` is a value
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
    const init = node.initializer;
    const code = init !== undefined && (ts.isArrowFunction(init) || ts.isFunctionExpression(init) || ts.isClassExpression(init));
    return code || /^[A-Z][A-Z0-9_]+$/.test(node.name.text) ? node.name.text : undefined;
  }
  if (ts.isPropertyDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined && ts.isFunctionLike(node.initializer)) return node.name.text;
  return undefined;
}

/**
 * A declaration that only hands on: a constant that is another name (`const A = B`), or a function
 * whose body calls one of `targets` (directly, or as a method: `x.parseArgs`).
 */
function handsOn(node: ts.Node, targets: readonly string[]): boolean {
  if (ts.isVariableDeclaration(node)) {
    const init = node.initializer;
    if (init === undefined) return false;
    if (ts.isIdentifier(init) || ts.isPropertyAccessExpression(init)) return true;
    if (!ts.isArrowFunction(init) && !ts.isFunctionExpression(init)) return false;
    return calls(init, targets);
  }
  if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) return calls(node, targets);
  if (ts.isPropertyDeclaration(node) && node.initializer !== undefined) return calls(node.initializer, targets);
  return false;
}

function calls(node: ts.Node, targets: readonly string[]): boolean {
  let found = false;
  const walk = (n: ts.Node): void => {
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const callee = n.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
      if (name !== undefined && targets.includes(name)) found = true;
    }
    if (!found) ts.forEachChild(n, walk);
  };
  ts.forEachChild(node, walk);
  return found;
}

/** `a === b || a.startsWith(`${b}/`)` (either order, `+ '/'` too): is-under written out again. */
function isInlineIsUnder(node: ts.Node): boolean {
  if (!ts.isBinaryExpression(node) || node.operatorToken.kind !== ts.SyntaxKind.BarBarToken) return false;
  const sides = [node.left, node.right].map(unwrap);
  const equality = sides.find((s) => ts.isBinaryExpression(s) && s.operatorToken.kind === ts.SyntaxKind.EqualsEqualsEqualsToken);
  const prefix = sides.find((s) => ts.isCallExpression(s) && ts.isPropertyAccessExpression(s.expression) && s.expression.name.text === 'startsWith');
  if (equality === undefined || prefix === undefined || !ts.isCallExpression(prefix)) return false;
  const argument = prefix.arguments[0];
  return argument !== undefined && endsWithSlash(argument);
}

function unwrap(node: ts.Expression): ts.Expression {
  return ts.isParenthesizedExpression(node) ? unwrap(node.expression) : node;
}

function endsWithSlash(node: ts.Expression): boolean {
  if (ts.isTemplateExpression(node)) return node.templateSpans.at(-1)?.literal.text === '/';
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const right = unwrap(node.right);
    return (ts.isStringLiteral(right) && right.text === '/') || (ts.isIdentifier(right) && right.text === 'sep');
  }
  return false;
}
