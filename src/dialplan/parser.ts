// extensions.conf → ParsedDialplan: `[general]` and `[globals]` are settings, every other section
// is a context of `exten`, `same`, `include`, `ignorepat` and switch entries.
import { readConfigSections, type ConfigReadOptions, type ConfigSection } from '../config/conf/reader.ts';
import { ContextBuilder } from './context-builder.ts';
import { splitExtensionName } from './extension-fields.ts';
import type { ParsedDialplan, ParsedInclude, ParsedSwitch } from './parsed.ts';
import { substitute } from './substitute.ts';
import { syntaxError, type SourceLine } from '../config/conf/syntax-error.ts';

export { DialplanSyntaxError } from '../config/conf/syntax-error.ts';

const SETTINGS_SECTIONS = new Set(['general', 'globals']);

export interface ParseDialplanOptions {
  /** Reads `#include`d files; without it an `#include` line is a syntax error. */
  readonly include?: ConfigReadOptions['include'];
}

/**
 * Parses extensions.conf text; throws DialplanSyntaxError naming `file` and the line. `#exec`
 * (running a program to produce configuration) is refused and any directive Asterisk does not
 * know is ignored: either line is skipped with a warning.
 */
export function parseDialplan(text: string, file = 'extensions.conf', options: ParseDialplanOptions = {}): ParsedDialplan {
  const warnings: string[] = [];
  const sections = readConfigSections(text, file, {
    ...(options.include && { include: options.include }),
    onDirective(directive, at) {
      const word = directive.split(/\s/, 1)[0];
      const lower = word.toLowerCase();
      if (lower === '#exec' || lower === '#tryexec') {
        warnings.push(`${at.file}:${at.line}: ${word} refused: Patchbay does not run programs named in its configuration; line ignored`);
        return;
      }
      if (lower === '#include' || lower === '#tryinclude') throw syntaxError(at, `${word} is not supported here`);
      // As Asterisk's configuration reader: any other `#word` (a commented-out line written
      // `# same => ...` among them) is an unknown directive, skipped with a warning.
      warnings.push(`${at.file}:${at.line}: unknown directive '${word.slice(0, 40)}'; line ignored`);
    },
  }).filter((section) => !section.template);
  const general = new Map<string, string>();
  const globals = new Map<string, string>();
  // All globals are known before any context is read, as Asterisk loads them first.
  for (const section of sections) {
    const kind = section.name.toLowerCase();
    if (kind === 'general') {
      for (const entry of section.entries) general.set(entry.name, entry.value);
    } else if (kind === 'globals') {
      for (const entry of section.entries) {
        const value = expand(entry.value, globals);
        globals.set(entry.name, entry.append ? (globals.get(entry.name) ?? '') + value : value);
      }
    }
  }

  const contexts = new Map<string, ContextBuilder>();
  for (const section of sections) {
    if (SETTINGS_SECTIONS.has(section.name.toLowerCase())) continue;
    let context = contexts.get(section.name);
    if (!context) {
      context = new ContextBuilder(section.name, section.line, (text) => expand(text, globals), file);
      contexts.set(section.name, context);
    }
    readContextSection(section, context, globals, file, warnings);
  }

  return { file, contexts: [...contexts.values()].map((context) => context.build()), globals, general, warnings };
}

function readContextSection(
  section: ConfigSection,
  context: ContextBuilder,
  globals: ReadonlyMap<string, string>,
  file: string,
  warnings: string[],
): void {
  context.startSection();
  for (const entry of section.entries) {
    const at: SourceLine = { file: entry.file ?? file, line: entry.line };
    if (entry.append) throw syntaxError(at, `'+=' is not meaningful for '${entry.name}'`);
    const directive = entry.name.toLowerCase();
    switch (directive) {
      case 'exten': {
        const [spec, rest] = splitExtensionName(entry.value);
        context.addExten(expand(spec, globals).trim(), rest, at);
        break;
      }
      case 'same':
        context.addSame(entry.value, at);
        break;
      case 'include':
        context.addInclude(readInclude(expand(entry.value, globals), at));
        break;
      case 'ignorepat':
        context.addIgnorePattern(expand(entry.value, globals));
        break;
      case 'switch':
      case 'lswitch':
      case 'eswitch': {
        const parsed = readSwitch(directive, directive === 'switch' ? expand(entry.value, globals) : entry.value, at);
        context.addSwitch(parsed);
        // Kept in the parsed context (dialplan show lists it) but never consulted when a call
        // looks an extension up: an administrator relying on it must hear so at load.
        warnings.push(`${at.file}:${at.line}: ${entry.name} => ${parsed.module.slice(0, 40)}/… in context '${section.name}' is not supported by Patchbay (extensions are not looked up through switches); line ignored`);
        break;
      }
      case 'autohints':
        // Asterisk would make a hint for each device of the context that registers: not done here.
        if (/^(yes|true|on|1)$/i.test(entry.value.trim())) warnings.push(`${at.file}:${at.line}: autohints in context '${section.name}' is not supported by Patchbay: only hints written as exten => X,hint,Device exist; line ignored`);
        break;
      default:
        throw syntaxError(at, `unknown directive '${entry.name}' in context '${section.name}'`);
    }
  }
}

/** `include => context` or `include => context,times,weekdays,mdays,months`. */
function readInclude(value: string, at: SourceLine): ParsedInclude {
  const comma = value.indexOf(',');
  const context = (comma < 0 ? value : value.slice(0, comma)).trim();
  if (context === '') throw syntaxError(at, 'include names no context');
  const timing = comma < 0 ? undefined : value.slice(comma + 1).trim();
  return timing ? { context, timing, line: at.line } : { context, line: at.line };
}

function readSwitch(kind: ParsedSwitch['kind'], value: string, at: SourceLine): ParsedSwitch {
  const slash = value.indexOf('/');
  const module = (slash < 0 ? value : value.slice(0, slash)).trim();
  if (module === '') throw syntaxError(at, `${kind} names no switch module`);
  return { kind, module, data: slash < 0 ? '' : value.slice(slash + 1), line: at.line };
}

/** Load-time substitution only sees globals, like Asterisk's substitution without a channel. */
function expand(text: string, globals: ReadonlyMap<string, string>): string {
  return substitute(text, (name) => globals.get(name));
}
