// Values inside `$[...]`: Asterisk keeps numbers, strings that look numeric, and other strings
// apart, and that distinction decides whether `<` compares numerically or lexically.

export type ExpressionValue =
  | { readonly kind: 'number'; readonly number: number }
  /** Digits and dots, not yet converted: compared as a number unless paired with a string. */
  | { readonly kind: 'numeric'; readonly text: string }
  | { readonly kind: 'string'; readonly text: string };

export const ZERO: ExpressionValue = { kind: 'number', number: 0 };

export function numberValue(number: number): ExpressionValue {
  return { kind: 'number', number };
}

export function booleanValue(truth: boolean): ExpressionValue {
  return { kind: 'number', number: truth ? 1 : 0 };
}

const NUMERIC_TEXT = /^[0-9.]+$/;

/** A computed string, classified as numeric the way Asterisk's make_str does (digits and dots only). */
export function textValue(text: string): ExpressionValue {
  return { kind: NUMERIC_TEXT.test(text) ? 'numeric' : 'string', text };
}

export function stringValue(text: string): ExpressionValue {
  return { kind: 'string', text };
}

export function toNumber(value: ExpressionValue): number | undefined {
  if (value.kind === 'number') return value.number;
  if (value.kind === 'string') return undefined;
  const number = Number.parseFloat(value.text);
  return Number.isNaN(number) ? 0 : number;
}

export function toText(value: ExpressionValue): string {
  return value.kind === 'number' ? formatNumber(value.number) : value.text;
}

/** Falsy in Asterisk's sense: the number zero, an empty string, or a numeric string worth zero. */
export function isZeroOrEmpty(value: ExpressionValue): boolean {
  if (value.kind === 'number') return value.number === 0;
  return value.text === '' || toNumber(value) === 0;
}

const SIGNIFICANT_DIGITS = 16;

/** printf's `%.16g`: integers print plainly and binary noise such as 0.30000000000000004 disappears. */
export function formatNumber(number: number): string {
  if (Number.isNaN(number)) return 'nan';
  if (!Number.isFinite(number)) return number > 0 ? 'inf' : '-inf';
  if (number === 0) return Object.is(number, -0) ? '-0' : '0';
  const [mantissa, exponentText] = number.toExponential(SIGNIFICANT_DIGITS - 1).split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= SIGNIFICANT_DIGITS) {
    const sign = exponent < 0 ? '-' : '+';
    return `${trimFraction(mantissa)}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return trimFraction(number.toFixed(SIGNIFICANT_DIGITS - 1 - exponent));
}

function trimFraction(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
