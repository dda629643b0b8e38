// printf as func_sprintf applies it to dialplan text: each conversion takes the next argument,
// read as a number where the conversion wants one (a non-number reads as 0).

import { MAX_VARIABLE_VALUE_LENGTH } from '../../core/variable-limits.ts';

const CONVERSION = /%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t)?([diouxXcsfFeEgGaA%])/g;
/** Width and precision beyond this are clamped, so `%999999999d` cannot build a huge string. */
const MAX_FIELD_WIDTH = 4096;

/** The formatted text stops growing here (the longest variable value). */
const MAX_OUTPUT_LENGTH = MAX_VARIABLE_VALUE_LENGTH;

export function sprintf(format: string, args: readonly string[]): string {
  let next = 0;
  let produced = 0;
  const take = (): string => args[next++] ?? '';
  const formatted = format.replace(CONVERSION, (_whole, flags: string, widthText: string | undefined, precisionText: string | undefined, conversion: string) => {
    if (produced > MAX_OUTPUT_LENGTH) return '';
    if (conversion === '%') return '%';
    const width = Math.min(MAX_FIELD_WIDTH, widthText === '*' ? Math.abs(Number.parseInt(take(), 10) || 0) : Number(widthText ?? 0));
    // A negative precision given by `*` counts as none, as C's printf takes it.
    const starPrecision = precisionText === '*' ? Number.parseInt(take(), 10) || 0 : 0;
    const precision =
      precisionText === undefined || starPrecision < 0 ? undefined : Math.min(MAX_FIELD_WIDTH, precisionText === '*' ? starPrecision : Number(precisionText));
    const arg = take();
    const piece = pad(convert(conversion, arg, flags, precision), width, flags, conversion);
    produced += piece.length;
    return piece;
  });
  return formatted.length > MAX_OUTPUT_LENGTH ? formatted.slice(0, MAX_OUTPUT_LENGTH) : formatted;
}

function integerOf(text: string): bigint {
  const match = /^\s*([+-]?)(0x[0-9a-f]+|0[0-7]*|\d+)/i.exec(text);
  if (!match) return 0n;
  try {
    const magnitude = BigInt(match[2].startsWith('0') && match[2].length > 1 && !/^0x/i.test(match[2]) ? `0o${match[2].slice(1)}` : match[2]);
    return match[1] === '-' ? -magnitude : magnitude;
  } catch {
    return 0n;
  }
}

function floatOf(text: string): number {
  const value = Number.parseFloat(text);
  return Number.isNaN(value) ? 0 : value;
}

function signed(text: string, negative: boolean, flags: string): string {
  if (negative) return `-${text}`;
  if (flags.includes('+')) return `+${text}`;
  if (flags.includes(' ')) return ` ${text}`;
  return text;
}

function convert(conversion: string, arg: string, flags: string, precision: number | undefined): string {
  switch (conversion) {
    case 'd':
    case 'i': {
      const value = BigInt.asIntN(64, integerOf(arg));
      const digits = (value < 0n ? -value : value).toString();
      return signed(precision === undefined ? digits : digits.padStart(precision, '0'), value < 0n, flags);
    }
    case 'u':
    case 'o':
    case 'x':
    case 'X': {
      const value = BigInt.asUintN(64, integerOf(arg));
      const radix = conversion === 'u' ? 10 : conversion === 'o' ? 8 : 16;
      let digits = value.toString(radix);
      if (conversion === 'X') digits = digits.toUpperCase();
      if (precision !== undefined) digits = digits.padStart(precision, '0');
      if (flags.includes('#') && value !== 0n) {
        if (conversion === 'o' && !digits.startsWith('0')) digits = `0${digits}`;
        if (conversion === 'x') digits = `0x${digits}`;
        if (conversion === 'X') digits = `0X${digits}`;
      }
      return digits;
    }
    case 'c':
      return String.fromCharCode(Number(BigInt.asUintN(8, integerOf(arg))));
    case 's':
      return precision === undefined ? arg : arg.slice(0, precision);
    default:
      return formatFloat(conversion, floatOf(arg), flags, precision ?? 6);
  }
}

function formatFloat(conversion: string, value: number, flags: string, precision: number): string {
  const negative = value < 0 || Object.is(value, -0);
  const magnitude = Math.abs(value);
  const upper = conversion === conversion.toUpperCase();
  let text: string;
  if (!Number.isFinite(magnitude)) {
    text = Number.isNaN(magnitude) ? 'nan' : 'inf';
  } else {
    switch (conversion.toLowerCase()) {
      case 'f':
        text = magnitude.toFixed(Math.min(precision, 100));
        break;
      case 'e':
        text = exponential(magnitude, Math.min(precision, 100));
        break;
      case 'a':
        text = `0x${magnitude.toString(16)}p+0`;
        break;
      default: {
        // %g: the shorter of %e and %f at `precision` significant digits, trailing zeros removed.
        const significant = precision === 0 ? 1 : Math.min(precision, 100);
        const exponent = magnitude === 0 ? 0 : Math.floor(Math.log10(magnitude));
        text = exponent < -4 || exponent >= significant ? exponential(magnitude, significant - 1) : magnitude.toFixed(Math.max(0, significant - 1 - exponent));
        if (!flags.includes('#')) text = withoutTrailingZeros(text);
      }
    }
  }
  if (upper) text = text.toUpperCase();
  return signed(text, negative && !Number.isNaN(value), flags);
}

/** `1.500000e+03` → `1.5e+03`, `2.000` → `2`: %g drops zeros after the point. */
function withoutTrailingZeros(text: string): string {
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  if (!mantissa.includes('.')) return text;
  return mantissa.replace(/0+$/, '').replace(/\.$/, '') + (e < 0 ? '' : text.slice(e));
}

/** C's %e: at least two exponent digits. */
function exponential(value: number, precision: number): string {
  return value.toExponential(precision).replace(/e([+-])(\d)$/, 'e$10$2');
}

function pad(text: string, width: number, flags: string, conversion: string): string {
  if (text.length >= width) return text;
  if (flags.includes('-')) return text.padEnd(width, ' ');
  const numeric = conversion !== 's' && conversion !== 'c';
  if (flags.includes('0') && numeric) {
    const sign = /^[+\- ]|^0[xX]/.exec(text)?.[0] ?? '';
    return sign + text.slice(sign.length).padStart(width - sign.length, '0');
  }
  return text.padStart(width, ' ');
}
