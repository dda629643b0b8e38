// The `app_filter` of StasisBroadcast(): a POSIX extended regular expression, unanchored, matched
// against Stasis application names. The pattern comes from the dialplan (and so possibly from a
// caller's digits or headers through variables), so it is never handed to a backtracking engine:
// it is parsed here and run as a Thompson NFA (a Pike VM without captures), whose time is linear
// in the name's length times the program's size, whatever the pattern.
//
// Asterisk's own safety limits (res_stasis_broadcast.c) are applied on top, so that a pattern
// Asterisk refuses is refused here too: at most 256 characters, groups nested at most 10 deep, at
// most 3 quantified groups, interval bounds at most 100, at most 20 alternatives in a group nested
// deeper than 2. Patterns using what this engine does not implement (back-references, word
// boundaries, collating elements) are refused the same way. A refused pattern means "no
// filtering", as in Asterisk; the caller logs it.

export interface AppFilter {
  readonly pattern: string;
  /** True when the pattern matches somewhere in `name`. */
  matches(name: string): boolean;
}

const MAX_PATTERN_LENGTH = 256;
const MAX_GROUP_DEPTH = 10;
const MAX_QUANTIFIED_GROUPS = 3;
const MAX_INTERVAL_BOUND = 100;
const MAX_ALTERNATIONS = 20;
const ALTERNATION_DEPTH_THRESHOLD = 2;
/** Instructions a compiled pattern may have (intervals multiply their operand). */
const MAX_PROGRAM = 20_000;
/** Names longer than this are not application names; they never match. */
const MAX_NAME_LENGTH = 1024;

type CharTest = (codePoint: number) => boolean;

type Node =
  | { readonly kind: 'char'; readonly test: CharTest }
  | { readonly kind: 'bol' }
  | { readonly kind: 'eol' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'cat'; readonly items: readonly Node[] }
  | { readonly kind: 'alt'; readonly items: readonly Node[] }
  | { readonly kind: 'group'; readonly node: Node }
  | { readonly kind: 'repeat'; readonly node: Node; readonly min: number; readonly max: number };

class PatternError extends Error {}

const CLASSES: ReadonlyMap<string, CharTest> = new Map<string, CharTest>([
  ['alpha', (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)],
  ['digit', (c) => c >= 0x30 && c <= 0x39],
  ['alnum', (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)],
  ['upper', (c) => c >= 0x41 && c <= 0x5a],
  ['lower', (c) => c >= 0x61 && c <= 0x7a],
  ['space', (c) => c === 0x20 || (c >= 0x09 && c <= 0x0d)],
  ['blank', (c) => c === 0x20 || c === 0x09],
  ['punct', (c) => (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e)],
  ['xdigit', (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)],
  ['cntrl', (c) => c < 0x20 || c === 0x7f],
  ['graph', (c) => c > 0x20 && c < 0x7f],
  ['print', (c) => c >= 0x20 && c < 0x7f],
]);
const WORD = (c: number): boolean => CLASSES.get('alnum')!(c) || c === 0x5f;

/** Recursive-descent parser over code points; `depth` and the counters implement Asterisk's limits. */
class Parser {
  private pos = 0;
  private depth = 0;
  quantifiedGroups = 0;
  private readonly chars: readonly string[];

  constructor(pattern: string) {
    this.chars = Array.from(pattern);
  }

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.chars.length) throw new PatternError(`unmatched ')' at ${this.pos}`);
    if (this.quantifiedGroups > MAX_QUANTIFIED_GROUPS) throw new PatternError(`more than ${MAX_QUANTIFIED_GROUPS} quantified groups`);
    return node;
  }

  private peek(): string | undefined {
    return this.chars[this.pos];
  }

  private alternation(): Node {
    const items = [this.concatenation()];
    while (this.peek() === '|') {
      this.pos++;
      items.push(this.concatenation());
    }
    if (this.depth > ALTERNATION_DEPTH_THRESHOLD && items.length - 1 > MAX_ALTERNATIONS) {
      throw new PatternError(`more than ${MAX_ALTERNATIONS} alternatives in a group nested ${this.depth} deep`);
    }
    return items.length === 1 ? items[0]! : { kind: 'alt', items };
  }

  private concatenation(): Node {
    const items: Node[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') break;
      let atom = this.atom();
      for (;;) {
        const bounds = this.quantifier();
        if (!bounds) break;
        if (atom.kind === 'group') this.quantifiedGroups++;
        atom = { kind: 'repeat', node: atom, min: bounds[0], max: bounds[1] };
      }
      items.push(atom);
    }
    if (items.length === 0) return { kind: 'empty' };
    return items.length === 1 ? items[0]! : { kind: 'cat', items };
  }

  /** `*`, `+`, `?` or an interval `{m}`, `{m,}`, `{m,n}`; a `{` that starts none is a literal. */
  private quantifier(): [number, number] | undefined {
    const c = this.peek();
    if (c === '*') return this.pos++, [0, Infinity];
    if (c === '+') return this.pos++, [1, Infinity];
    if (c === '?') return this.pos++, [0, 1];
    if (c !== '{') return undefined;
    // A bound above the limit refuses the pattern even before its `}` is seen, as Asterisk's check does.
    const match = /^\{([0-9]+)(,([0-9]*))?/.exec(this.chars.slice(this.pos, this.pos + 24).join(''));
    if (!match) return undefined;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
    if (min > MAX_INTERVAL_BOUND || (max !== Infinity && max > MAX_INTERVAL_BOUND)) throw new PatternError(`interval bound above ${MAX_INTERVAL_BOUND}`);
    if (this.chars[this.pos + match[0].length] !== '}') return undefined;
    if (max < min) throw new PatternError(`invalid interval ${match[0]}}`);
    this.pos += match[0].length + 1;
    return [min, max];
  }

  private atom(): Node {
    const c = this.chars[this.pos++]!;
    switch (c) {
      case '(': {
        this.depth++;
        if (this.depth > MAX_GROUP_DEPTH) throw new PatternError(`groups nested deeper than ${MAX_GROUP_DEPTH}`);
        const inner = this.alternation();
        if (this.peek() !== ')') throw new PatternError("unmatched '('");
        this.pos++;
        this.depth--;
        return { kind: 'group', node: inner };
      }
      case '[':
        return { kind: 'char', test: this.bracket() };
      case '.':
        return { kind: 'char', test: () => true };
      case '^':
        return { kind: 'bol' };
      case '$':
        return { kind: 'eol' };
      case '*':
      case '+':
      case '?':
        throw new PatternError(`'${c}' has nothing to repeat`);
      case '\\': {
        const escaped = this.chars[this.pos++];
        if (escaped === undefined) throw new PatternError('trailing backslash');
        if (escaped === 'w') return { kind: 'char', test: WORD };
        if (escaped === 'W') return { kind: 'char', test: (x) => !WORD(x) };
        if (escaped === 's') return { kind: 'char', test: CLASSES.get('space')! };
        if (escaped === 'S') return { kind: 'char', test: (x) => !CLASSES.get('space')!(x) };
        if (/^[1-9bB<>`']$/.test(escaped)) throw new PatternError(`\\${escaped} is not supported`);
        return literal(escaped);
      }
      default:
        return literal(c);
    }
  }

  /** A bracket expression after its `[`: POSIX rules (a leading `]` is literal, `\` is literal). */
  private bracket(): CharTest {
    const tests: CharTest[] = [];
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.pos++;
    }
    let first = true;
    for (;;) {
      const c = this.chars[this.pos];
      if (c === undefined) throw new PatternError("unmatched '['");
      if (c === ']' && !first) {
        this.pos++;
        break;
      }
      first = false;
      if (c === '[' && (this.chars[this.pos + 1] === ':' || this.chars[this.pos + 1] === '=' || this.chars[this.pos + 1] === '.')) {
        const kind = this.chars[this.pos + 1]!;
        const close = this.chars.indexOf(kind, this.pos + 2);
        if (close < 0 || this.chars[close + 1] !== ']') throw new PatternError(`unterminated [${kind}`);
        const name = this.chars.slice(this.pos + 2, close).join('');
        if (kind !== ':') throw new PatternError(`[${kind}${name}${kind}] is not supported`);
        const test = CLASSES.get(name);
        if (!test) throw new PatternError(`unknown character class [:${name}:]`);
        tests.push(test);
        this.pos = close + 2;
        continue;
      }
      this.pos++;
      const low = c.codePointAt(0)!;
      if (this.peek() === '-' && this.chars[this.pos + 1] !== undefined && this.chars[this.pos + 1] !== ']') {
        const endChar = this.chars[this.pos + 1]!;
        if (endChar === '[') throw new PatternError('a range may not end in a class');
        const high = endChar.codePointAt(0)!;
        if (high < low) throw new PatternError(`invalid range ${c}-${endChar}`);
        this.pos += 2;
        tests.push((x) => x >= low && x <= high);
      } else {
        tests.push((x) => x === low);
      }
    }
    const any = (x: number): boolean => tests.some((test) => test(x));
    return negate ? (x) => !any(x) : any;
  }
}

function literal(c: string): Node {
  const code = c.codePointAt(0)!;
  return { kind: 'char', test: (x) => x === code };
}

// ---- The program --------------------------------------------------------------------------------

const enum Op {
  Char,
  Split,
  Jump,
  Bol,
  Eol,
  Match,
}

interface Instruction {
  op: Op;
  test?: CharTest;
  /** Jump target, or the first branch of a split. */
  x: number;
  /** Second branch of a split. */
  y: number;
}

class Compiler {
  readonly program: Instruction[] = [];

  private emit(op: Op, test?: CharTest): number {
    if (this.program.length >= MAX_PROGRAM) throw new PatternError(`pattern expands beyond ${MAX_PROGRAM} instructions`);
    this.program.push({ op, test, x: -1, y: -1 });
    return this.program.length - 1;
  }

  compile(node: Node): void {
    switch (node.kind) {
      case 'char':
        this.emit(Op.Char, node.test);
        return;
      case 'bol':
        this.emit(Op.Bol);
        return;
      case 'eol':
        this.emit(Op.Eol);
        return;
      case 'empty':
        return;
      case 'group':
        this.compile(node.node);
        return;
      case 'cat':
        for (const item of node.items) this.compile(item);
        return;
      case 'alt': {
        const jumps: number[] = [];
        for (let i = 0; i < node.items.length - 1; i++) {
          const split = this.emit(Op.Split);
          this.program[split]!.x = split + 1;
          this.compile(node.items[i]!);
          jumps.push(this.emit(Op.Jump));
          this.program[split]!.y = this.program.length;
        }
        this.compile(node.items[node.items.length - 1]!);
        for (const jump of jumps) this.program[jump]!.x = this.program.length;
        return;
      }
      case 'repeat': {
        for (let i = 0; i < node.min; i++) this.compile(node.node);
        if (node.max === Infinity) {
          const split = this.emit(Op.Split);
          this.program[split]!.x = split + 1;
          this.compile(node.node);
          this.program[this.emit(Op.Jump)]!.x = split;
          this.program[split]!.y = this.program.length;
          return;
        }
        const splits: number[] = [];
        for (let i = node.min; i < node.max; i++) {
          const split = this.emit(Op.Split);
          this.program[split]!.x = split + 1;
          splits.push(split);
          this.compile(node.node);
        }
        for (const split of splits) this.program[split]!.y = this.program.length;
        return;
      }
    }
  }
}

/** Runs the program over `name` with every start position at once (unanchored search). */
function run(program: readonly Instruction[], name: string): boolean {
  const chars = Array.from(name);
  const size = program.length;
  let current = new Int32Array(size);
  let next = new Int32Array(size);
  let currentCount = 0;
  let nextCount = 0;
  // The step at which each instruction was last added: an instruction is added once per step.
  const seen = new Int32Array(size).fill(-1);
  const stack = new Int32Array(size * 2 + 2);
  let matched = false;

  const add = (list: Int32Array, count: number, start: number, step: number, atEnd: boolean): number => {
    let top = 0;
    stack[top++] = start;
    while (top > 0) {
      const pc = stack[--top]!;
      if (pc >= size) {
        matched = true;
        continue;
      }
      if (seen[pc] === step) continue;
      seen[pc] = step;
      const instruction = program[pc]!;
      switch (instruction.op) {
        case Op.Char:
          list[count++] = pc;
          break;
        case Op.Jump:
          stack[top++] = instruction.x;
          break;
        case Op.Split:
          stack[top++] = instruction.y;
          stack[top++] = instruction.x;
          break;
        case Op.Bol:
          if (step === 0) stack[top++] = pc + 1;
          break;
        case Op.Eol:
          if (atEnd) stack[top++] = pc + 1;
          break;
        case Op.Match:
          matched = true;
          break;
      }
    }
    return count;
  };

  for (let step = 0; step <= chars.length; step++) {
    const atEnd = step === chars.length;
    currentCount = add(current, currentCount, 0, step, atEnd);
    if (matched) return true;
    if (atEnd) break;
    const c = chars[step]!.codePointAt(0)!;
    nextCount = 0;
    for (let i = 0; i < currentCount; i++) {
      const pc = current[i]!;
      if (program[pc]!.test!(c)) nextCount = add(next, nextCount, pc + 1, step + 1, step + 1 === chars.length);
    }
    if (matched) return true;
    [current, next] = [next, current];
    currentCount = nextCount;
  }
  return matched;
}

/** Compiles an app_filter; a string is the reason it was refused (then nothing is filtered). */
export function compileAppFilter(pattern: string): AppFilter | string {
  if (pattern.length > MAX_PATTERN_LENGTH) return `longer than ${MAX_PATTERN_LENGTH} characters`;
  let program: Instruction[];
  try {
    const parser = new Parser(pattern);
    const node = parser.parse();
    const compiler = new Compiler();
    compiler.compile(node);
    program = compiler.program;
  } catch (err) {
    if (err instanceof PatternError) return err.message;
    throw err;
  }
  return {
    pattern,
    matches: (name) => name.length <= MAX_NAME_LENGTH && run(program, name),
  };
}
