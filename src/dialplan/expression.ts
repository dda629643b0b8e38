// `$[...]` expressions (Asterisk's ast_expr2 grammar), evaluated as they are parsed since every
// operand is evaluated anyway: Asterisk does not short-circuit.
import {
  arithmetic,
  compare,
  complement,
  concatenate,
  conditional,
  and,
  negate,
  or,
  regexMatch,
  type ArithmeticOperator,
  type ComparisonOperator,
} from './expression-operators.ts';
import { callFunction, type FunctionResolver } from './expression-functions.ts';
import { formatNumber, stringValue, toText, type ExpressionValue } from './expression-value.ts';

export type { FunctionResolver } from './expression-functions.ts';

export class ExpressionError extends Error {
  override name = 'ExpressionError';
}

type Token =
  | { readonly kind: 'value'; readonly value: ExpressionValue }
  | { readonly kind: 'operator'; readonly text: string };

/** Longest first, so `<=` is not read as `<` then `=`. */
const OPERATORS = [
  ...['||', '&&', '==', '=~', '~~', '>=', '<=', '!=', '::'],
  ...['|', '&', '=', '>', '<', '+', '-', '*', '/', '%', '?', '!', ':', '(', ')', ','],
];
const SYNONYMS: Record<string, string> = { '||': '|', '&&': '&', '==': '=' };
const OPERATOR_START = new Set(OPERATORS.filter((operator) => operator !== '~~').map((operator) => operator[0]));
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);
const NUMBER = /^\d+(\.\d+)?$/;

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expression.length) {
    const ch = expression[i];
    if (WHITESPACE.has(ch)) {
      i++;
    } else if (ch === '"') {
      const close = expression.indexOf('"', i + 1);
      if (close < 0) throw new ExpressionError(`unterminated quoted string in '${expression}'`);
      // The quotes stay part of the value: `"a" = a` is false in Asterisk too.
      tokens.push({ kind: 'value', value: stringValue(expression.slice(i, close + 1)) });
      i = close + 1;
    } else {
      const operator = OPERATORS.find((candidate) => expression.startsWith(candidate, i));
      if (operator) {
        tokens.push({ kind: 'operator', text: SYNONYMS[operator] ?? operator });
        i += operator.length;
        continue;
      }
      let end = i;
      while (end < expression.length && !endsWord(expression, end)) end++;
      const word = expression.slice(i, end);
      tokens.push({ kind: 'value', value: NUMBER.test(word) ? { kind: 'numeric', text: word } : stringValue(word) });
      i = end;
    }
  }
  return tokens;
}

function endsWord(expression: string, index: number): boolean {
  const ch = expression[index];
  if (WHITESPACE.has(ch) || ch === '"' || OPERATOR_START.has(ch)) return true;
  return ch === '~' && expression[index + 1] === '~';
}

/** Operators from loosest to tightest binding, as declared in ast_expr2.y. */
const COMPARISONS = new Set(['=', '!=', '<', '>', '<=', '>=']);
const ADDITIVE = new Set(['+', '-']);
const MULTIPLICATIVE = new Set(['*', '/', '%']);
const STRING_OPERATORS = new Set([':', '=~', '~~']);

class ExpressionParser {
  private position = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly source: string,
    private readonly resolveFunction: FunctionResolver | undefined,
  ) {}

  parse(): ExpressionValue {
    if (this.tokens.length === 0) return stringValue('');
    const value = this.conditional();
    if (this.position < this.tokens.length) this.fail(`unexpected '${this.describe(this.tokens[this.position])}'`);
    return value;
  }

  private conditional(): ExpressionValue {
    let value = this.or();
    while (this.accept('?')) {
      const then = this.or();
      if (!this.accept('::')) this.fail("expected '::' after '?' branch");
      const otherwise = this.or();
      value = conditional(value, then, otherwise);
    }
    return value;
  }

  private or(): ExpressionValue {
    let value = this.and();
    while (this.accept('|')) value = or(value, this.and());
    return value;
  }

  private and(): ExpressionValue {
    let value = this.comparison();
    while (this.accept('&')) value = and(value, this.comparison());
    return value;
  }

  private comparison(): ExpressionValue {
    let value = this.additive();
    for (let operator = this.acceptAny(COMPARISONS); operator; operator = this.acceptAny(COMPARISONS)) {
      value = compare(operator as ComparisonOperator, value, this.additive());
    }
    return value;
  }

  private additive(): ExpressionValue {
    let value = this.multiplicative();
    for (let operator = this.acceptAny(ADDITIVE); operator; operator = this.acceptAny(ADDITIVE)) {
      value = arithmetic(operator as ArithmeticOperator, value, this.multiplicative());
    }
    return value;
  }

  private multiplicative(): ExpressionValue {
    let value = this.unary();
    for (let operator = this.acceptAny(MULTIPLICATIVE); operator; operator = this.acceptAny(MULTIPLICATIVE)) {
      value = arithmetic(operator as ArithmeticOperator, value, this.unary());
    }
    return value;
  }

  /** Unary operators bind looser than the string operators: `!a : b` is `!(a : b)`. */
  private unary(): ExpressionValue {
    if (this.accept('!')) return complement(this.unary());
    if (this.accept('-')) return negate(this.unary());
    return this.stringOperation();
  }

  private stringOperation(): ExpressionValue {
    let value = this.primary();
    for (let operator = this.acceptAny(STRING_OPERATORS); operator; operator = this.acceptAny(STRING_OPERATORS)) {
      const operand = this.peekOperator('!') || this.peekOperator('-') ? this.unary() : this.primary();
      value = operator === '~~' ? concatenate(value, operand) : regexMatch(value, operand, operator === ':');
    }
    return value;
  }

  private primary(): ExpressionValue {
    const token = this.tokens[this.position];
    if (!token) this.fail('unexpected end of expression');
    if (token.kind === 'operator') {
      if (token.text !== '(') this.fail(`unexpected '${token.text}'`);
      this.position++;
      const value = this.conditional();
      if (!this.accept(')')) this.fail("missing ')'");
      return value;
    }
    this.position++;
    if (this.accept('(')) return this.call(toText(token.value));
    return token.value;
  }

  private call(name: string): ExpressionValue {
    const args: ExpressionValue[] = [];
    if (!this.accept(')')) {
      for (;;) {
        args.push(this.peekOperator(',') || this.peekOperator(')') ? stringValue('') : this.conditional());
        if (this.accept(')')) break;
        if (!this.accept(',')) this.fail(`missing ')' after arguments of ${name}`);
      }
    }
    return callFunction(name, args, this.resolveFunction);
  }

  private peekOperator(text: string): boolean {
    const token = this.tokens[this.position];
    return token?.kind === 'operator' && token.text === text;
  }

  private accept(text: string): boolean {
    if (!this.peekOperator(text)) return false;
    this.position++;
    return true;
  }

  private acceptAny(operators: ReadonlySet<string>): string | undefined {
    const token = this.tokens[this.position];
    if (token?.kind !== 'operator' || !operators.has(token.text)) return undefined;
    this.position++;
    return token.text;
  }

  private describe(token: Token): string {
    return token.kind === 'operator' ? token.text : toText(token.value);
  }

  private fail(reason: string): never {
    throw new ExpressionError(`${reason} in expression '${this.source}'`);
  }
}

/**
 * Evaluates the inside of `$[...]` (after variable substitution) to its text, e.g. `1` or `0` for
 * comparisons. Throws ExpressionError on a syntax error.
 */
export function evaluateExpression(expression: string, resolveFunction?: FunctionResolver): string {
  const value = new ExpressionParser(tokenize(expression), expression, resolveFunction).parse();
  return value.kind === 'number' ? formatNumber(value.number) : value.text;
}
