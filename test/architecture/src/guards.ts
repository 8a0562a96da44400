import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { BACKEND_USERS, BACKENDS, LAYERS, SCOPE } from './layers.js';
import type { SourceFile } from './source-tree.js';
import { constantString, forEachNode, lineOf, moduleReferences, parse } from './syntax.js';

/** The rules the guards enforce. */
export const GUARD_RULES = ['import-direction', 'package-internals', 'unknown-package', 'backend-side-door', 'credential-brand', 'credential-construction', 'error-base', 'one-mechanism'] as const;
/** One of {@link GUARD_RULES}. */
export type GuardRule = (typeof GUARD_RULES)[number];

/** A place in the tree that breaks a rule. */
export interface Violation {
  readonly rule: GuardRule;
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** The credential brand's registry key, and the only packages allowed to touch it. */
export const BRAND_KEY = '@aalis/api-reach/credential';
export const BRAND_PACKAGES: ReadonlySet<string> = new Set(['api-reach', 'plugin-reach']);

/**
 * Imports point left only, name a package's face (never its `src/`), stay inside their package,
 * and reach a sandbox backend only from tests or where {@link BACKEND_USERS} allows.
 */
export function checkImports(root: string, files: readonly SourceFile[]): Violation[] {
  const violations: Violation[] = [];
  for (const file of files) {
    const own = LAYERS[file.pkg];
    for (const ref of moduleReferences(parse(file.path, file.text))) {
      const at = { file: file.display, line: ref.line };
      if (ref.specifier.startsWith(SCOPE)) {
        const [name = '', ...rest] = ref.specifier.slice(SCOPE.length).split('/');
        const target = LAYERS[name];
        if (rest.length > 0) {
          violations.push({ ...at, rule: 'package-internals', message: `imports '${ref.specifier}': import from '${SCOPE}${name}' (its src/index.ts face), not from inside it.` });
        }
        if (BACKENDS.has(name) && name !== file.pkg && !isTestCode(file) && !BACKEND_USERS[file.pkg]?.includes(name)) {
          violations.push({ ...at, rule: 'backend-side-door', message: `'${SCOPE}${file.pkg}' imports the sandbox backend '${SCOPE}${name}': reach a backend only through the kernel's \`sandbox\` service (inject it; refuse when it is missing). Only a test may bring a backend along.` });
        }
        if (target === undefined || own === undefined) {
          const which = own === undefined ? `package '${file.pkg}'` : `'${SCOPE}${name}'`;
          violations.push({ ...at, rule: 'unknown-package', message: `${which} has no layer in test/architecture/src/layers.ts; add it where docs/architecture.md places it.` });
        } else if (target > own) {
          violations.push({ ...at, rule: 'import-direction', message: `'${SCOPE}${file.pkg}' (layer ${own}) imports '${SCOPE}${name}' (layer ${target}), which is to its right; move the shared piece left or invert the dependency with a service.` });
        }
      } else if (ref.specifier.startsWith('.')) {
        const target = resolve(dirname(file.path), ref.specifier);
        const pkgDir = join(root, 'packages', file.pkg);
        const inside = relative(pkgDir, target);
        if ((inside.startsWith('..') || inside.split(sep)[0] === '..') && !(isTestCode(file) && isSharedTestHelper(root, target))) {
          violations.push({ ...at, rule: 'package-internals', message: `imports '${ref.specifier}', which leaves package '${file.pkg}'; import the other package by its name.` });
        }
      }
    }
  }
  return violations;
}

/**
 * The places outside its package that test code may import by relative path (dev code, no package
 * of its own to depend on): `test/bench/`, where every bench records its figures for `pnpm bench`,
 * and `test/scratch.ts`, the test run's folder for what a sandbox must see.
 */
function isSharedTestHelper(root: string, target: string): boolean {
  if (target.replace(/\.[jt]s$/, '') === join(root, 'test', 'scratch')) return true;
  const inside = relative(join(root, 'test', 'bench'), target);
  return inside !== '' && !inside.startsWith('..') && !isAbsolute(inside);
}

/** Tests, their helpers (`*.testing.ts`) and benchmarks: code that may bring a real backend along. */
function isTestCode(file: SourceFile): boolean {
  const inside = file.display.split('/').slice(2);
  return /\.(test|testing|bench)\.[cm]?[tj]sx?$/.test(file.display) || inside[0] === 'test' || inside[0] === 'bench';
}

/** Each package's declared `@aalis/*` dependencies point left only, and name a sandbox backend only where {@link BACKEND_USERS} allows. */
export function checkManifests(root: string, packages: readonly string[]): Violation[] {
  const violations: Violation[] = [];
  for (const pkg of packages) {
    const display = `packages/${pkg}/package.json`;
    const manifest = JSON.parse(readFileSync(join(root, display), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const own = LAYERS[pkg];
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const dep of Object.keys(manifest[field] ?? {})) {
        if (!dep.startsWith(SCOPE)) continue;
        const target = LAYERS[dep.slice(SCOPE.length)];
        if (own !== undefined && target !== undefined && target > own) {
          violations.push({ rule: 'import-direction', file: display, line: 1, message: `'${SCOPE}${pkg}' depends on '${dep}' (${field}), which is to its right.` });
        }
        const name = dep.slice(SCOPE.length);
        if (field !== 'devDependencies' && BACKENDS.has(name) && name !== pkg && !BACKEND_USERS[pkg]?.includes(name)) {
          violations.push({ rule: 'backend-side-door', file: display, line: 1, message: `'${SCOPE}${pkg}' depends on the sandbox backend '${dep}' (${field}); only its tests may (devDependencies): it reaches backends through the \`sandbox\` service.` });
        }
      }
    }
  }
  return violations;
}

const SYMBOL_READERS = new Set(['getOwnPropertySymbols', 'ownKeys', 'keyFor']);

/**
 * Only api-reach and plugin-reach mention the credential brand (by name, by its registry key
 * spelled any constant way, or through `Symbol.for` of a value that cannot be checked) or build
 * an object typed `ReachCredential`.
 */
export function checkCredential(files: readonly SourceFile[]): Violation[] {
  const violations: Violation[] = [];
  for (const file of files) {
    if (BRAND_PACKAGES.has(file.pkg)) continue;
    const tree = parse(file.path, file.text);
    const flag = (rule: GuardRule, node: ts.Node, message: string) => violations.push({ rule, file: file.display, line: lineOf(tree, node), message });
    forEachNode(tree, (node) => {
      if (ts.isIdentifier(node) && node.text === 'REACH_CREDENTIAL') {
        flag('credential-brand', node, `mentions REACH_CREDENTIAL; only ${[...BRAND_PACKAGES].join(' and ')} may. Take the credential from the call context instead.`);
      }
      if (isOutermostConstant(node)) {
        const value = constantString(node);
        if (value !== undefined && squash(value).includes(squash(BRAND_KEY))) {
          flag('credential-brand', node, `spells the credential brand's key '${BRAND_KEY}'; only ${[...BRAND_PACKAGES].join(' and ')} may.`);
        }
      }
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const method = node.expression.name.text;
        const owner = node.expression.expression;
        const on = ts.isIdentifier(owner) ? owner.text : '';
        if (on === 'Symbol' && method === 'for') {
          const argument = node.arguments[0];
          if (argument === undefined || constantString(argument) === undefined) {
            flag('credential-brand', node, 'calls Symbol.for with a key that is not a constant string, so it could be the credential brand; use a literal key.');
          }
        } else if (SYMBOL_READERS.has(method) && (on === 'Object' || on === 'Reflect' || on === 'Symbol')) {
          flag('credential-brand', node, `${on}.${method} can lift the credential brand off a credential; only ${[...BRAND_PACKAGES].join(' and ')} may use it.`);
        }
      }
      if (buildsCredential(node)) {
        flag('credential-construction', node, 'builds an object typed ReachCredential; only plugin-reach issues credentials (reach.forCall).');
      }
    });
  }
  return dedupe(violations);
}

function dedupe(violations: Violation[]): Violation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = `${v.rule}:${v.file}:${v.line}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Folds case, separators and punctuation so `@AALIS/api_reach/credential` still matches. */
function squash(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** A constant string expression that is not part of a larger constant one (checked once, whole). */
function isOutermostConstant(node: ts.Node): node is ts.Expression {
  if (!isExpression(node) || constantString(node) === undefined) return false;
  const parent = node.parent;
  return !(parent !== undefined && isExpression(parent) && constantString(parent) !== undefined);
}

function isExpression(node: ts.Node): node is ts.Expression {
  return ts.isExpression(node) && !ts.isIdentifier(node);
}

function namesCredential(type: ts.TypeNode | undefined): boolean {
  if (type === undefined) return false;
  if (ts.isTypeReferenceNode(type)) {
    const name = ts.isIdentifier(type.typeName) ? type.typeName.text : type.typeName.right.text;
    if (name === 'ReachCredential') return true;
    // Wrappers (Promise, Partial, Readonly, …) still describe a credential being built.
    return (type.typeArguments ?? []).some((argument) => namesCredential(argument));
  }
  if (ts.isParenthesizedTypeNode(type)) return namesCredential(type.type);
  return false;
}

function buildsCredential(node: ts.Node): boolean {
  if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node) || ts.isSatisfiesExpression(node)) return namesCredential(node.type);
  if (ts.isVariableDeclaration(node)) return namesCredential(node.type) && node.initializer !== undefined && isFresh(node.initializer);
  if (ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node) && !ts.isMethodSignature(node)) {
    // A function typed to return a credential builds one if what it returns is fresh; handing on one it was given is fine.
    return namesCredential(node.type) && 'body' in node && node.body !== undefined && returnsFresh(node.body);
  }
  if (ts.isClassLike(node)) {
    return (node.heritageClauses ?? []).some((clause) => clause.types.some((t) => ts.isIdentifier(t.expression) && t.expression.text === 'ReachCredential'));
  }
  return false;
}

function returnsFresh(body: ts.Node): boolean {
  if (!ts.isBlock(body)) return isFresh(body as ts.Expression);
  let fresh = false;
  const walk = (node: ts.Node): void => {
    if (ts.isReturnStatement(node) && node.expression && isFresh(node.expression)) fresh = true;
    if (!ts.isFunctionLike(node)) ts.forEachChild(node, walk);
  };
  ts.forEachChild(body, walk);
  return fresh;
}

function isFresh(node: ts.Expression): boolean {
  if (ts.isAsExpression(node) || ts.isParenthesizedExpression(node) || ts.isSatisfiesExpression(node) || ts.isTypeAssertionExpression(node)) {
    return isFresh(node.expression);
  }
  return ts.isObjectLiteralExpression(node) || ts.isNewExpression(node) || (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'assign');
}
