// The generic Asterisk .conf layer beneath the dialplan: sections, `name = value` / `name => value`
// entries, and comments. Knows nothing of what the entries mean.
import { DialplanSyntaxError, syntaxError, type SourceLine } from './syntax-error.ts';

export interface ConfigEntry {
  readonly name: string;
  readonly value: string;
  readonly line: number;
  /** The file the entry was read from, when it differs from the main file (an `#include`d one). */
  readonly file?: string;
  /** Written `name += value`: extends an earlier value instead of replacing it. */
  readonly append: boolean;
}

export interface ConfigSection {
  readonly name: string;
  readonly line: number;
  /** `[name](!)`: only exists to be inherited from. */
  template: boolean;
  readonly entries: ConfigEntry[];
}

const SEMICOLON = 0x3b;

interface BlockCommentState {
  depth: number;
  openedAtLine: number;
}

/**
 * Removes `;` line comments and `;-- ... --;` block comments (which nest and span lines);
 * `\;` stands for a literal semicolon.
 */
function stripComments(raw: string, lineNumber: number, block: BlockCommentState): string {
  let kept = '';
  let liveFrom = 0;
  // A `--;` terminator may not reuse the dashes of the `;--` that opened the block.
  let terminatorFrom = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw.charCodeAt(i) !== SEMICOLON) continue;
    if (block.depth === 0 && i > 0 && raw[i - 1] === '\\') {
      kept += raw.slice(liveFrom, i - 1) + ';';
      liveFrom = i + 1;
    } else if (raw[i + 1] === '-' && raw[i + 2] === '-' && raw[i + 3] !== '-') {
      if (block.depth === 0) {
        kept += raw.slice(liveFrom, i);
        block.openedAtLine = lineNumber;
      }
      block.depth++;
      i += 2;
      terminatorFrom = i + 1;
    } else if (block.depth > 0 && i >= terminatorFrom + 2 && raw[i - 1] === '-' && raw[i - 2] === '-') {
      block.depth--;
      terminatorFrom = i + 1;
      liveFrom = i + 1;
    } else if (block.depth === 0) {
      return kept + raw.slice(liveFrom, i);
    }
  }
  return block.depth === 0 ? kept + raw.slice(liveFrom) : kept;
}

export interface ConfigReadOptions {
  /**
   * Called for a `#include`/`#exec`/… line, which is then skipped; without it such a line is a
   * syntax error (the dialplan refuses them).
   */
  onDirective?(directive: string, at: SourceLine): void;
  /** Most entries in all sections together, inherited copies included; beyond it is a syntax error. */
  maxEntries?: number;
  /**
   * Reads the files of an `#include`/`#tryinclude` line (the caller resolves, confines and bounds
   * them); their lines are read in place, continuing the current section. Without it such a line
   * goes to onDirective.
   */
  include?(target: string, at: SourceLine, optional: boolean, depth: number): readonly IncludedFile[];
}

export interface IncludedFile {
  readonly file: string;
  readonly text: string;
}

/** `#include` nested deeper than this is a syntax error (a file including itself stops here). */
export const MAX_INCLUDE_DEPTH = 8;

/** Bounds what template inheritance can multiply (`[b](a,a)`, `[c](b,b)` … doubles each time). */
export const DEFAULT_MAX_CONFIG_ENTRIES = 1_000_000;

/** Reads the sections of an Asterisk configuration file, resolving `(+)` appends and `(template)` inheritance. */
export function readConfigSections(text: string, file: string, options: ConfigReadOptions = {}): ConfigSection[] {
  const state: ReadState = { sections: [], budget: { left: options.maxEntries ?? DEFAULT_MAX_CONFIG_ENTRIES }, current: undefined, mainFile: file };
  readFileLines(text, file, 0, state, options);
  return state.sections;
}

interface ReadState {
  readonly sections: ConfigSection[];
  readonly budget: { left: number };
  current: ConfigSection | undefined;
  readonly mainFile: string;
}

function readFileLines(text: string, file: string, depth: number, state: ReadState, options: ConfigReadOptions): void {
  const block: BlockCommentState = { depth: 0, openedAtLine: 0 };
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);

  for (let index = 0; index < lines.length; index++) {
    const lineNumber = index + 1;
    const line = stripComments(lines[index], lineNumber, block).trim();
    if (line === '') continue;
    const at: SourceLine = { file, line: lineNumber };

    if (line.startsWith('[')) {
      state.current = readSectionHeader(line, at, state.sections, state.budget);
    } else if (line.startsWith('#')) {
      const word = line.split(/\s/, 1)[0].toLowerCase();
      if (options.include && (word === '#include' || word === '#tryinclude')) {
        if (depth + 1 > MAX_INCLUDE_DEPTH) throw syntaxError(at, `#include nested deeper than ${MAX_INCLUDE_DEPTH} files`);
        const target = line.slice(word.length).trim().replace(/^["<](.*)[">]$/, '$1');
        if (target === '') throw syntaxError(at, `${word} names no file`);
        for (const included of options.include(target, at, word === '#tryinclude', depth + 1)) {
          readFileLines(included.text, included.file, depth + 1, state, options);
        }
        continue;
      }
      if (!options.onDirective) throw syntaxError(at, `${line.split(/\s/, 1)[0]} is not supported`);
      options.onDirective(line, at);
    } else {
      if (!state.current) throw syntaxError(at, 'entry outside of any [section]');
      spend(state.budget, 1, at);
      const entry = readEntry(line, at);
      state.current.entries.push(file === state.mainFile ? entry : { ...entry, file });
    }
  }

  if (block.depth > 0) {
    throw new DialplanSyntaxError(file, block.openedAtLine, "block comment ';--' is never closed with '--;'");
  }
}

function spend(budget: { left: number }, entries: number, at: SourceLine): void {
  budget.left -= entries;
  if (budget.left < 0) throw syntaxError(at, 'too many entries (templates inherited too often?)');
}

function readSectionHeader(line: string, at: SourceLine, sections: ConfigSection[], budget: { left: number }): ConfigSection {
  const close = line.indexOf(']');
  if (close < 0) throw syntaxError(at, "section header is missing its closing ']'");
  const name = line.slice(1, close).trim();
  if (name === '') throw syntaxError(at, 'section name is empty');

  const rest = line.slice(close + 1).trim();
  let options: string[] = [];
  if (rest.startsWith('(')) {
    const optionsEnd = rest.indexOf(')');
    if (optionsEnd < 0) throw syntaxError(at, "section options are missing their closing ')'");
    if (rest.slice(optionsEnd + 1).trim() !== '') throw syntaxError(at, 'unexpected text after section options');
    options = rest.slice(1, optionsEnd).split(',').map((option) => option.trim());
  } else if (rest !== '') {
    throw syntaxError(at, "unexpected text after ']'");
  }

  let section: ConfigSection = { name, line: at.line, template: false, entries: [] };
  let isNew = true;
  for (const option of options) {
    if (option === '!') {
      section.template = true;
    } else if (option === '+') {
      const existing = findLast(sections, name);
      if (!existing) throw syntaxError(at, `cannot append to section [${name}]: it does not exist yet`);
      existing.template ||= section.template;
      existing.entries.push(...section.entries);
      section = existing;
      isNew = false;
    } else if (option !== '') {
      const base = sections.find((candidate) => candidate.name === option);
      if (!base) throw syntaxError(at, `cannot inherit from [${option}]: it does not exist yet`);
      spend(budget, base.entries.length, at);
      for (const entry of base.entries) section.entries.push(entry);
    }
  }
  if (isNew) sections.push(section);
  return section;
}

function readEntry(line: string, at: SourceLine): ConfigEntry {
  const equals = line.indexOf('=');
  if (equals < 0) throw syntaxError(at, `expected 'name => value', got '${line}'`);
  const append = equals > 0 && line[equals - 1] === '+';
  const name = line.slice(0, append ? equals - 1 : equals).trim();
  if (name === '') throw syntaxError(at, "missing name before '='");
  const valueStart = line[equals + 1] === '>' ? equals + 2 : equals + 1;
  return { name, value: line.slice(valueStart).trim(), line: at.line, append };
}

function findLast(sections: readonly ConfigSection[], name: string): ConfigSection | undefined {
  for (let i = sections.length - 1; i >= 0; i--) {
    if (sections[i].name === name) return sections[i];
  }
  return undefined;
}
