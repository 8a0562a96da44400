import ts from 'typescript';
import type { Violation } from './guards.js';
import type { SourceFile } from './source-tree.js';
import { forEachNode, lineOf, parse } from './syntax.js';

/** The one error base class every package's errors extend, and the file that may extend `Error` to define it. */
export const ERROR_BASE = { name: 'AalisError', file: 'packages/core/src/aalis-error.ts' } as const;

/** The error constructors of the language: extending one directly skips the base. */
const BUILTIN_ERRORS: ReadonlySet<string> = new Set(['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'AggregateError']);

interface ClassFact {
  readonly name: string | undefined;
  /** The last name of the `extends` expression (`Error` for `globalThis.Error`). */
  readonly parent: string;
  readonly file: SourceFile;
  readonly line: number;
}

/**
 * Every class that is an error (its `extends` chain reaches a built-in error, or its parent is a
 * class named `…Error` the tree does not define) must reach {@link ERROR_BASE} on the way.
 * Parents are resolved by name: in the same file first, then the same package, then the tree
 * (where the name is unique).
 */
export function checkErrorClasses(files: readonly SourceFile[]): Violation[] {
  const classes: ClassFact[] = [];
  for (const file of files) {
    const tree = parse(file.path, file.text);
    forEachNode(tree, (node) => {
      if (!ts.isClassDeclaration(node) && !ts.isClassExpression(node)) return;
      const parent = extendsName(node);
      if (parent === undefined) return;
      classes.push({ name: node.name?.text ?? nameOfExpression(node), parent, file, line: lineOf(tree, node) });
    });
  }
  const resolveParent = (fact: ClassFact): ClassFact | undefined => {
    const named = classes.filter((c) => c.name === fact.parent && c !== fact);
    const near = named.find((c) => c.file === fact.file) ?? named.find((c) => c.file.pkg === fact.file.pkg);
    // Another package's class of the base's name is not the base: only a local one can shadow it.
    return near ?? (named.length === 1 && fact.parent !== ERROR_BASE.name ? named[0] : undefined);
  };
  /** `base`: reaches the base; `builtin`: reaches a built-in error without it; `other`: not an error class. */
  const verdict = (fact: ClassFact, seen = new Set<ClassFact>()): 'base' | 'builtin' | 'other' => {
    if (seen.has(fact)) return 'other';
    seen.add(fact);
    if (BUILTIN_ERRORS.has(fact.parent)) return fact.name === ERROR_BASE.name && fact.file.display === ERROR_BASE.file ? 'base' : 'builtin';
    const parent = resolveParent(fact);
    if (parent !== undefined) return verdict(parent, seen);
    // Not defined in the tree: core's base (imported), or an error class from elsewhere that skips it.
    if (fact.parent === ERROR_BASE.name) return 'base';
    return fact.parent.endsWith('Error') ? 'builtin' : 'other';
  };
  return classes
    .filter((fact) => verdict(fact) === 'builtin')
    .map((fact) => ({
      rule: 'error-base' as const,
      file: fact.file.display,
      line: fact.line,
      message: `${fact.name ?? 'an anonymous class'} extends ${fact.parent} without ${ERROR_BASE.name}; extend ${ERROR_BASE.name} from '@aalis/core' (a stable code, the message, an optional fix) so every error of the project has the same fields.`,
    }));
}

function extendsName(node: ts.ClassLikeDeclaration): string | undefined {
  for (const clause of node.heritageClauses ?? []) {
    if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
    const expression = clause.types[0]?.expression;
    if (expression === undefined) return undefined;
    if (ts.isIdentifier(expression)) return expression.text;
    if (ts.isPropertyAccessExpression(expression)) return expression.name.text;
    return expression.getText();
  }
  return undefined;
}

/** `const Name = class extends …` names the class by its variable. */
function nameOfExpression(node: ts.ClassLikeDeclaration): string | undefined {
  const holder = node.parent;
  return holder !== undefined && ts.isVariableDeclaration(holder) && ts.isIdentifier(holder.name) ? holder.name.text : undefined;
}
