/**
 * Finds the error codes a source file can emit by reading it with the TypeScript parser (no
 * type checker: it runs in milliseconds). A code is a string literal that is either
 * SCREAMING_SNAKE with an underscore anywhere (`'LEDGER_LOST'`), or an all-capitals word in a
 * place that holds a code: the value of a `code` property or field, the first argument of
 * `new SomethingError(...)`, a comparison with `something.code`, a `case` of a switch on
 * `something.code`. A template literal in such a place (`HTTP_${status}`) is a family, reported
 * as its text with each substitution written `*` (`HTTP_*`).
 */
import ts from 'typescript';

export interface FoundCode {
  /** The code, or a family's pattern with `*` for each substitution. */
  code: string;
  file: string;
  line: number;
  /**
   * True when the literal is a code by the rules above; false for an all-capitals word elsewhere
   * (an argument, a constant): not judged, but it counts as a use of a catalogue code of that name.
   */
  emitted: boolean;
  /** The constructor it is given to (`new UsageError`), which says its exit code. */
  via?: string;
}

const SNAKE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;
const WORD = /^[A-Z][A-Z0-9]{2,}$/;
/** Constructors whose first argument is a message or a variable name, never a code. */
const NOT_CODE_FIRST_ARGUMENT = new Set(['Error', 'RangeError', 'TypeError', 'SyntaxError', 'ConfigError']);

/** Expressions a value passes through unchanged on its way to where it is used. */
function outerOf(node: ts.Node): ts.Node {
  let current = node;
  for (;;) {
    const parent = current.parent;
    if (
      ts.isParenthesizedExpression(parent) ||
      ts.isAsExpression(parent) ||
      ts.isSatisfiesExpression(parent) ||
      (ts.isConditionalExpression(parent) && parent.condition !== current) ||
      (ts.isBinaryExpression(parent) &&
        (parent.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken ||
          parent.operatorToken.kind === ts.SyntaxKind.BarBarToken))
    ) {
      current = parent;
      continue;
    }
    return current;
  }
}

function nameText(name: ts.Node | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name)) return name.text;
  return undefined;
}

/** Where a literal sits, when that place holds a code; `via` names the constructor it is given to. */
function codePlace(literal: ts.Node): { via?: string } | undefined {
  const outer = outerOf(literal);
  const parent = outer.parent;
  if (
    (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isVariableDeclaration(parent)) &&
    parent.initializer === outer &&
    nameText(parent.name) === 'code'
  )
    return {};
  if (ts.isNewExpression(parent) && parent.arguments?.[0] === outer) {
    const callee = parent.expression;
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
    if (name.endsWith('Error') && !NOT_CODE_FIRST_ARGUMENT.has(name)) return { via: `new ${name}` };
  }
  return undefined;
}

/** Every code a TypeScript source text holds, in source order. */
export function scanSource(file: string, text: string): FoundCode[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: FoundCode[] = [];
  const add = (node: ts.Node, code: string, emitted: boolean, via?: string): void => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ code, file, line, emitted, ...(via === undefined ? {} : { via }) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const snake = SNAKE.test(node.text);
      if (snake || WORD.test(node.text)) {
        const place = codePlace(node);
        add(node, node.text, snake || place !== undefined, place?.via);
      }
    } else if (ts.isTemplateExpression(node)) {
      const pattern = node.head.text + node.templateSpans.map((span) => `*${span.literal.text}`).join('');
      const place = codePlace(node);
      if (place !== undefined && /^[A-Z][A-Z0-9_*]*$/.test(pattern)) add(node, pattern, true, place.via);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
