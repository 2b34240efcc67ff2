/**
 * Every module a TypeScript file loads, read with the TypeScript parser (no type checker, so it
 * is fast): static imports (`import type` included), `export ... from`, `import x = require()`,
 * dynamic `import()`, `typeof import()` in types, `require()` (also through a `createRequire`
 * binding of any name), and `new URL('./x.js', import.meta.url)` (a worker thread's file). The
 * specifier may be single- or double-quoted or a template literal; a template with a
 * substitution cannot be resolved and is reported as such, so it can be refused.
 */
import ts from 'typescript';

export interface ImportSpec {
  /** The specifier as written, or undefined when it is computed (a template with `${...}`, a variable). */
  specifier: string | undefined;
  /** The form it was found in, for messages: `import`, `export from`, `import()`, `require()`, ... */
  form: string;
  line: number;
}

function literalText(node: ts.Node | undefined): string | undefined {
  if (node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) return node.text;
  return undefined;
}

/** `createRequire(...)` or `module.createRequire(...)`. */
function isCreateRequire(node: ts.Expression): boolean {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  return (
    (ts.isIdentifier(callee) && callee.text === 'createRequire') ||
    (ts.isPropertyAccessExpression(callee) && callee.name.text === 'createRequire')
  );
}

function isImportMetaUrl(node: ts.Node | undefined): boolean {
  return (
    node !== undefined &&
    ts.isPropertyAccessExpression(node) &&
    node.name.text === 'url' &&
    ts.isMetaProperty(node.expression) &&
    node.expression.keywordToken === ts.SyntaxKind.ImportKeyword
  );
}

/** Every import of one source text, in source order. */
export function importsIn(file: string, text: string): ImportSpec[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  // Names bound to a require function: `require` itself, and `const load = createRequire(import.meta.url)`.
  const requires = new Set(['require']);
  const collectRequires = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
      if (isCreateRequire(node.initializer)) requires.add(node.name.text);
    }
    ts.forEachChild(node, collectRequires);
  };
  collectRequires(source);

  const found: ImportSpec[] = [];
  const add = (node: ts.Node, form: string, specifier: ts.Node | undefined): void => {
    // `cond ? './a.js' : './b.js'` loads one of two files: both are imports.
    if (specifier !== undefined && ts.isConditionalExpression(specifier)) {
      add(node, form, specifier.whenTrue);
      add(node, form, specifier.whenFalse);
      return;
    }
    if (specifier !== undefined && ts.isParenthesizedExpression(specifier))
      return add(node, form, specifier.expression);
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ specifier: literalText(specifier), form, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node, 'import', node.moduleSpecifier);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined)
      add(node, 'export from', node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, 'import = require()', node.moduleReference.expression);
    else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      add(node, 'import() type', ts.isLiteralTypeNode(argument) ? argument.literal : argument);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword) add(node, 'import()', node.arguments[0]);
      else if (ts.isIdentifier(callee) && requires.has(callee.text)) add(node, `${callee.text}()`, node.arguments[0]);
    } else if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'URL' &&
      isImportMetaUrl(node.arguments?.[1])
    ) {
      add(node, 'new URL(import.meta.url)', node.arguments?.[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
