// Accumulates one context's entries, resolving `n`/`same`/label priorities in file order the way
// pbx_config.c does, and rejecting what Asterisk would only warn about.
import {
  parseApplication,
  parsePriorityField,
  splitCallerId,
  type PriorityField,
} from './extension-fields.ts';
import type { ParsedContext, ParsedExtension, ParsedInclude, ParsedStep, ParsedSwitch } from './parsed.ts';
import { compileExtension, ExtensionPatternError } from './pattern.ts';
import { syntaxError, type SourceLine } from '../config/conf/syntax-error.ts';

interface ExtensionDraft {
  readonly name: string;
  readonly callerId?: string;
  readonly line: number;
  readonly steps: Map<number, ParsedStep>;
  readonly labels: Map<string, number>;
  hint?: string;
  hintLine?: number;
}

export class ContextBuilder {
  readonly name: string;
  readonly line: number;
  private readonly extensions = new Map<string, ExtensionDraft>();
  private readonly includes: ParsedInclude[] = [];
  private readonly ignorePatterns: string[] = [];
  private readonly switches: ParsedSwitch[] = [];
  /** `n` and `same` continue from the previous entry of the section, whatever its extension. */
  private lastPriority: number | undefined;
  private lastExtension: string | undefined;
  /** Hints are expanded when loaded, since they are watched rather than run. */
  private readonly expandGlobals: (text: string) => string;

  /** Steps from other (`#include`d) files record theirs. */
  private readonly mainFile: string;

  constructor(name: string, line: number, expandGlobals: (text: string) => string, mainFile = '') {
    this.mainFile = mainFile;
    this.name = name;
    this.line = line;
    this.expandGlobals = expandGlobals;
  }

  /** A new section for this context starts: `n` and `same =>` do not carry over. */
  startSection(): void {
    this.lastPriority = undefined;
    this.lastExtension = undefined;
  }

  /** `exten => spec,priority,App(args)`, with `spec` already split off and expanded. */
  addExten(spec: string, rest: string | undefined, at: SourceLine): void {
    this.lastExtension = spec;
    this.addStep(spec, rest, at);
  }

  /** `same => priority,App(args)`: continues the previous `exten`. */
  addSame(rest: string, at: SourceLine): void {
    if (this.lastExtension === undefined) throw syntaxError(at, "'same' has no preceding 'exten' in this context");
    this.addStep(this.lastExtension, rest, at);
  }

  addInclude(include: ParsedInclude): void {
    this.includes.push(include);
  }

  addIgnorePattern(pattern: string): void {
    this.ignorePatterns.push(pattern);
  }

  addSwitch(entry: ParsedSwitch): void {
    this.switches.push(entry);
  }

  build(): ParsedContext {
    const extensions: ParsedExtension[] = [...this.extensions.values()].map((draft) => ({
      name: draft.name,
      ...(draft.callerId !== undefined && { callerId: draft.callerId }),
      steps: [...draft.steps.values()].sort((a, b) => a.priority - b.priority),
      ...(draft.hint !== undefined && { hint: draft.hint }),
      line: draft.line,
    }));
    return {
      name: this.name,
      line: this.line,
      extensions,
      includes: this.includes,
      ignorePatterns: this.ignorePatterns,
      switches: this.switches,
    };
  }

  private addStep(spec: string, rest: string | undefined, at: SourceLine): void {
    if (rest === undefined) throw syntaxError(at, "expected 'extension,priority,application'");
    const comma = rest.indexOf(',');
    const priorityText = comma < 0 ? rest : rest.slice(0, comma);
    const applicationText = comma < 0 ? '' : rest.slice(comma + 1);

    const extension = this.extensionFor(spec, at);
    const priority = parsePriorityField(priorityText, at);

    if (priority.base.kind === 'hint') {
      this.addHint(extension, priority, applicationText, at);
      return;
    }

    const number = this.resolvePriority(extension, priority, at);
    const { app, appData } = parseApplication(applicationText, at);
    const taken = extension.steps.get(number);
    if (taken) {
      throw syntaxError(
        at,
        `duplicate priority ${number} for extension '${describe(extension)}' in context '${this.name}' (first defined at line ${taken.line})`,
      );
    }
    if (priority.label !== undefined) {
      const labelled = extension.labels.get(priority.label);
      if (labelled !== undefined) {
        throw syntaxError(
          at,
          `duplicate label '${priority.label}' for extension '${describe(extension)}' in context '${this.name}' (already priority ${labelled})`,
        );
      }
      extension.labels.set(priority.label, number);
    }
    extension.steps.set(number, {
      priority: number,
      ...(priority.label !== undefined && { label: priority.label }),
      app,
      appData,
      line: at.line,
      ...(at.file !== this.mainFile && { file: at.file }),
    });
    this.lastPriority = number;
  }

  private addHint(extension: ExtensionDraft, priority: PriorityField, value: string, at: SourceLine): void {
    if (priority.offset !== 0 || priority.label !== undefined) {
      throw syntaxError(at, "a 'hint' priority takes no offset or label");
    }
    if (extension.hint !== undefined) {
      throw syntaxError(
        at,
        `duplicate hint for extension '${describe(extension)}' in context '${this.name}' (first defined at line ${extension.hintLine})`,
      );
    }
    const hint = this.expandGlobals(value).trim();
    if (hint === '') throw syntaxError(at, 'missing device state for hint');
    extension.hint = hint;
    extension.hintLine = at.line;
  }

  private resolvePriority(extension: ExtensionDraft, priority: PriorityField, at: SourceLine): number {
    const base = priority.base;
    let number: number;
    switch (base.kind) {
      case 'number':
        number = base.value;
        break;
      case 'next':
      case 'same':
        if (this.lastPriority === undefined) {
          throw syntaxError(at, `priority '${base.kind === 'next' ? 'n' : 's'}' needs a preceding entry in this context`);
        }
        number = base.kind === 'next' ? this.lastPriority + 1 : this.lastPriority;
        break;
      case 'label': {
        const labelled = extension.labels.get(base.label);
        if (labelled === undefined) {
          throw syntaxError(at, `invalid priority '${base.label}': no such label in extension '${describe(extension)}'`);
        }
        number = labelled;
        break;
      }
      case 'hint':
        throw new Error('hints have no priority');
    }
    return number + priority.offset;
  }

  private extensionFor(spec: string, at: SourceLine): ExtensionDraft {
    const [rawName, callerId] = splitCallerId(spec);
    if (rawName === '') throw syntaxError(at, 'missing extension name');
    let name: string;
    try {
      name = compileExtension(rawName).name;
      if (callerId !== undefined) compileExtension(callerId);
    } catch (error) {
      if (error instanceof ExtensionPatternError) throw syntaxError(at, error.message);
      throw error;
    }
    const key = callerId === undefined ? name : `${name}/${callerId}`;
    let draft = this.extensions.get(key);
    if (!draft) {
      draft = { name, callerId, line: at.line, steps: new Map(), labels: new Map() };
      this.extensions.set(key, draft);
    }
    return draft;
  }
}

function describe(extension: ExtensionDraft): string {
  return extension.callerId === undefined ? extension.name : `${extension.name}/${extension.callerId}`;
}
