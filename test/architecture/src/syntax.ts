import ts from 'typescript';

/** A module specifier found in a file, with its 1-based line. */
export interface ModuleReference {
  readonly specifier: string;
  readonly line: number;
}

/** Parses a file once; every guard walks the same tree. */
export function parse(path: string, text: string): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** The line of a node, 1-based. */
export function lineOf(file: ts.SourceFile, node: ts.Node): number {
  return file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
}

/** Calls `visit` for every node of the file. */
export function forEachNode(file: ts.SourceFile, visit: (node: ts.Node) => void): void {
  const walk = (node: ts.Node) => {
    visit(node);
    ts.forEachChild(node, walk);
  };
  walk(file);
}

/** Every module a file refers to: static imports and re-exports, `import()`, `require()`, `import x = require()`, type imports. */
export function moduleReferences(file: ts.SourceFile): ModuleReference[] {
  const found: ModuleReference[] = [];
  const add = (node: ts.Node, specifier: ts.Expression | undefined) => {
    const value = specifier && constantString(specifier);
    if (value !== undefined) found.push({ specifier: value, line: lineOf(file, node) });
  };
  forEachNode(file, (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node, node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isDynamicImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(callee) && callee.text === 'require';
      if (isDynamicImport || isRequire) add(node, node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal as ts.Expression);
  });
  return found;
}

/**
 * The value of an expression built only from string literals: plain and template literals,
 * `+` concatenation, parentheses, `String.raw`, `[...].join('')`. Anything else is `undefined`.
 */
export function constantString(node: ts.Expression): string | undefined {
  if (ts.isStringLiteralLike(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return constantString(node.expression);
  if (ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) return constantString(node.expression);
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans) {
      const value = constantString(span.expression);
      if (value === undefined) return undefined;
      text += value + span.literal.text;
    }
    return text;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = constantString(node.left);
    const right = constantString(node.right);
    return left !== undefined && right !== undefined ? left + right : undefined;
  }
  if (ts.isTaggedTemplateExpression(node) && ts.isNoSubstitutionTemplateLiteral(node.template)) {
    return node.template.rawText ?? node.template.text;
  }
  if (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    node.expression.name.text === 'join' &&
    ts.isArrayLiteralExpression(node.expression.expression)
  ) {
    const separator = node.arguments[0] ? constantString(node.arguments[0]) : ',';
    const parts = node.expression.expression.elements.map((e) => constantString(e));
    if (separator === undefined || parts.some((p) => p === undefined)) return undefined;
    return parts.join(separator);
  }
  return undefined;
}
