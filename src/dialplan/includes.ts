// `#include` for extensions.conf read from disk: a path relative to the including file (or
// absolute), whose last component may be a glob (`*`, `?`, `[...]`), matched files read in name
// order. Everything stays inside the directory of the main file (symbolic links are resolved
// before the check) and within bounds on file count and total size, so a configuration cannot
// make the server read the rest of the disk or loop on itself.
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { IncludedFile } from '../config/conf/reader.ts';
import { syntaxError, type SourceLine } from '../config/conf/syntax-error.ts';

/** Files one dialplan may include in all (each `#include` of the same file counts again). */
export const MAX_INCLUDED_FILES = 64;
/** Bytes of all included files together. */
export const MAX_INCLUDED_BYTES = 16 * 1024 * 1024;

export type IncludeReader = (target: string, at: SourceLine, optional: boolean, depth: number) => readonly IncludedFile[];

/** An include reader confined to the directory holding `mainFile`. */
export function includeReader(mainFile: string): IncludeReader {
  const written = path.dirname(path.resolve(mainFile));
  const root = realpathSync(written);
  const inside = (candidate: string): boolean =>
    [root, written].some((dir) => candidate === dir || candidate.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep));
  let files = 0;
  let bytes = 0;
  return (target, at, optional) => {
    const base = path.dirname(path.resolve(at.file));
    const wanted = path.resolve(base, target);
    const directory = path.dirname(wanted);
    const pattern = path.basename(wanted);
    // A path that leaves the directory as written is refused before anything outside is looked
    // at (listed, or probed for existence); links are checked on the real paths below.
    if (!inside(wanted)) throw syntaxError(at, `#include of ${target} refused: it leaves the configuration directory ${root}`);
    let candidates: string[];
    if (/[*?[]/.test(pattern)) {
      const matcher = globMatcher(pattern);
      let names: string[] = [];
      try {
        names = readdirSync(directory).filter((name) => matcher(name)).sort();
      } catch {
        names = [];
      }
      candidates = names.map((name) => path.join(directory, name));
    } else {
      candidates = [wanted];
    }
    const found: IncludedFile[] = [];
    for (const candidate of candidates) {
      let real: string;
      try {
        real = realpathSync(candidate);
        if (!statSync(real).isFile()) continue;
      } catch {
        continue;
      }
      if (real !== root && !real.startsWith(root + path.sep)) {
        throw syntaxError(at, `#include of ${target} refused: it leaves the configuration directory ${root}`);
      }
      if (++files > MAX_INCLUDED_FILES) throw syntaxError(at, `more than ${MAX_INCLUDED_FILES} #include files`);
      // The size is checked before reading: a huge file is never loaded into memory.
      let size: number;
      try {
        size = statSync(real).size;
      } catch {
        continue;
      }
      if (bytes + size > MAX_INCLUDED_BYTES) throw syntaxError(at, `#include files exceed ${MAX_INCLUDED_BYTES} bytes together`);
      const text = readFileSync(real, 'utf8');
      bytes += Buffer.byteLength(text);
      if (bytes > MAX_INCLUDED_BYTES) throw syntaxError(at, `#include files exceed ${MAX_INCLUDED_BYTES} bytes together`);
      found.push({ file: candidate, text });
    }
    if (found.length === 0 && !optional) throw syntaxError(at, `#include ${target}: no such file`);
    return found;
  };
}

/** One element of a glob: a literal character, `?`, `*`, or a `[...]` class. */
type GlobToken = { readonly kind: 'star' } | { readonly kind: 'any' } | { readonly kind: 'char'; readonly char: string } | { readonly kind: 'class'; readonly negated: boolean; readonly body: string };

/**
 * A shell glob for one file name: `*`, `?` and `[...]` classes (`[!...]` negated, `a-z` ranges); a
 * leading dot is only matched literally. Matched without regular expressions, by the greedy
 * algorithm that goes back only to the last `*`: time linear in pattern × name, whatever the
 * pattern (a regular expression of many `*` backtracks exponentially on a long name).
 */
function globMatcher(pattern: string): (name: string) => boolean {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (tokens[tokens.length - 1]?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === '?') tokens.push({ kind: 'any' });
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) {
        tokens.push({ kind: 'char', char: c });
        continue;
      }
      const body = pattern.slice(i + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      tokens.push({ kind: 'class', negated, body: negated ? body.slice(1) : body });
      i = close;
    } else tokens.push({ kind: 'char', char: c });
  }
  const first = tokens[0];
  const literalDot = first?.kind === 'char' && first.char === '.';
  return (name) => (literalDot || !name.startsWith('.')) && globMatches(tokens, name);
}

function globMatches(tokens: readonly GlobToken[], name: string): boolean {
  let t = 0;
  let n = 0;
  let starToken = -1;
  let starName = 0;
  while (n < name.length) {
    const token = tokens[t];
    if (token?.kind === 'star') {
      starToken = t++;
      starName = n;
    } else if (token && matchesOne(token, name[n]!)) {
      t++;
      n++;
    } else if (starToken >= 0) {
      // Let the last `*` take one more character and try again from there.
      t = starToken + 1;
      n = ++starName;
    } else return false;
  }
  while (tokens[t]?.kind === 'star') t++;
  return t === tokens.length;
}

function matchesOne(token: GlobToken, char: string): boolean {
  switch (token.kind) {
    case 'any':
      return char !== '/';
    case 'char':
      return char === token.char;
    case 'class': {
      let found = false;
      const { body } = token;
      for (let i = 0; i < body.length && !found; i++) {
        if (body[i + 1] === '-' && i + 2 < body.length) {
          found = char >= body[i]! && char <= body[i + 2]!;
          i += 2;
        } else found = char === body[i];
      }
      return found !== token.negated;
    }
    default:
      return false;
  }
}
