// `#include` for extensions.conf read from disk: a path relative to the including file (or
// absolute), whose last component may be a glob (`*`, `?`, `[...]`), matched files read in name
// order. Everything stays inside the directory of the main file (symbolic links are resolved
// before the check) and within bounds on file count and total size, so a configuration cannot
// make the server read the rest of the disk or loop on itself.
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { IncludedFile } from './config-reader.ts';
import { syntaxError, type SourceLine } from './syntax-error.ts';

/** Files one dialplan may include in all (each `#include` of the same file counts again). */
export const MAX_INCLUDED_FILES = 64;
/** Bytes of all included files together. */
export const MAX_INCLUDED_BYTES = 16 * 1024 * 1024;

export type IncludeReader = (target: string, at: SourceLine, optional: boolean, depth: number) => readonly IncludedFile[];

/** An include reader confined to the directory holding `mainFile`. */
export function includeReader(mainFile: string): IncludeReader {
  const root = realpathSync(path.dirname(path.resolve(mainFile)));
  let files = 0;
  let bytes = 0;
  return (target, at, optional) => {
    const base = path.dirname(path.resolve(at.file));
    const wanted = path.resolve(base, target);
    const directory = path.dirname(wanted);
    const pattern = path.basename(wanted);
    let candidates: string[];
    if (/[*?[]/.test(pattern)) {
      const matcher = globMatcher(pattern);
      let names: string[] = [];
      try {
        names = readdirSync(directory).filter((name) => matcher.test(name)).sort();
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
      const text = readFileSync(real, 'utf8');
      bytes += Buffer.byteLength(text);
      if (bytes > MAX_INCLUDED_BYTES) throw syntaxError(at, `#include files exceed ${MAX_INCLUDED_BYTES} bytes together`);
      found.push({ file: candidate, text });
    }
    if (found.length === 0 && !optional) throw syntaxError(at, `#include ${target}: no such file`);
    return found;
  };
}

/** A shell glob for one file name: `*`, `?` and `[...]` classes; a leading dot is only matched literally. */
function globMatcher(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) {
        source += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, close).replace(/\\/g, '\\\\');
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      source += `[${body}]`;
      i = close;
    } else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^(?!\\.)${source}$`);
}
