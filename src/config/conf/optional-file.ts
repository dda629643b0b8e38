// An optional, small Asterisk configuration file (indications.conf, features.conf): read whole when
// present, bounded in bytes and entries, `#` directives named and skipped. Every failure is a warning
// that says what stays in force instead; a missing file says nothing (Asterisk's defaults apply).
import fs from 'node:fs';
import path from 'node:path';
import { readConfigSections, type ConfigSection } from './reader.ts';

export interface OptionalFileOptions {
  /** The file's name, as warnings show it (`features.conf`). */
  readonly name: string;
  readonly maxBytes: number;
  readonly maxEntries: number;
  /** What stays in force when the file cannot be used, for the warning ("the defaults apply"). */
  readonly keeping: string;
  readonly warn: (line: string) => void;
}

/** The sections of `dir`/`name`; undefined when there is no file or it cannot be used (then with a warning). */
export function readOptionalConfFile(dir: string, options: OptionalFileOptions): ConfigSection[] | undefined {
  const { name, keeping, warn } = options;
  let text: string;
  try {
    const file = path.join(dir, name);
    const stat = fs.statSync(file);
    if (!stat.isFile()) return undefined;
    if (stat.size > options.maxBytes) {
      warn(`${name}: larger than ${options.maxBytes} bytes; not read, ${keeping}`);
      return undefined;
    }
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') warn(`${name}: cannot be read (${code ?? String(error)}); ${keeping}`);
    return undefined;
  }
  try {
    return readConfigSections(text, name, {
      maxEntries: options.maxEntries,
      onDirective: (directive, where) => warn(`${name}:${where.line}: ${directive.split(/\s/, 1)[0]!.slice(0, 40)} is not supported; line ignored`),
    });
  } catch (error) {
    warn(`${(error as Error).message.slice(0, 200)}; ${name} not read, ${keeping}`);
    return undefined;
  }
}

/** A warning list bounded at `max` lines, then one line saying more were left out (a hostile file cannot grow it). */
export function boundedWarnings(file: string, max: number): { readonly warnings: string[]; readonly warn: (line: string) => void } {
  const warnings: string[] = [];
  const warn = (line: string): void => {
    if (warnings.length < max) warnings.push(line);
    else if (warnings.length === max) warnings.push(`${file}: more warnings left out`);
  };
  return { warnings, warn };
}
