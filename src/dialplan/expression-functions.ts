// Function calls inside `$[...]`: the math functions ast_expr2 builds in, then the dialplan's own.
import { numberValue, textValue, toNumber, toText, ZERO, type ExpressionValue } from './expression-value.ts';

/** Evaluates a dialplan function call such as `CALLERID(num)`; `undefined` when it does not exist. */
export type FunctionResolver = (name: string, args: string) => string | undefined;

type MathFunction = (...args: number[]) => number;

const MATH_FUNCTIONS: Record<string, MathFunction> = {
  ABS: Math.abs,
  ACOS: Math.acos,
  ASIN: Math.asin,
  ATAN: Math.atan,
  ATAN2: Math.atan2,
  CEIL: Math.ceil,
  COS: Math.cos,
  EXP: Math.exp,
  EXP2: (x) => 2 ** x,
  EXP10: (x) => 10 ** x,
  FLOOR: Math.floor,
  LOG: Math.log,
  LOG2: Math.log2,
  LOG10: Math.log10,
  POW: Math.pow,
  REMAINDER: (x, y) => x - y * roundHalfEven(x / y),
  RINT: roundHalfEven,
  ROUND: (x) => Math.sign(x) * Math.round(Math.abs(x)),
  SIN: Math.sin,
  SQRT: Math.sqrt,
  TAN: Math.tan,
  TRUNC: Math.trunc,
};

function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const fraction = x - floor;
  if (fraction !== 0.5) return Math.round(x);
  return floor % 2 === 0 ? floor : floor + 1;
}

const FUNCTION_NAME = /^[A-Z0-9_]+$/;
const NUMBER_LIKE = /^[-0-9. \t]*$/;

/** Math functions are built in; anything else goes to the dialplan's functions, as `NAME(a,b)`. */
export function callFunction(
  name: string,
  args: readonly ExpressionValue[],
  resolveFunction: FunctionResolver | undefined,
): ExpressionValue {
  if (!FUNCTION_NAME.test(name)) return ZERO;
  const math = MATH_FUNCTIONS[name];
  if (math) {
    // Asterisk answers 0 to a wrong argument count; each function's arity is its declared length.
    if (args.length !== math.length) return ZERO;
    return numberValue(math(...args.map((arg) => toNumber(arg) ?? 0)));
  }
  const result = resolveFunction?.(name, args.map(toText).join(','));
  if (result === undefined) return ZERO;
  return NUMBER_LIKE.test(result) ? numberValue(Number.parseFloat(result) || 0) : textValue(result);
}
