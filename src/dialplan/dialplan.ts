// Lookups over a loaded dialplan, following pbx.c's search: a context's own extensions in
// specificity order, then its includes depth-first, each context visited at most once.
import { DialplanExtension, type DialplanStep } from './dialplan-extension.ts';
import type { ParsedDialplan, ParsedInclude } from './parsed.ts';
import { parseDialplan } from './parser.ts';
import { stripSeparators, type MatchMode } from './pattern.ts';

export type { DialplanStep } from './dialplan-extension.ts';

export interface DialplanOptions {
  /**
   * Decides whether an include applies right now; time-restricted includes (`include.timing`)
   * need a clock. By default every include applies.
   */
  readonly isIncludeActive?: (include: ParsedInclude, context: string) => boolean;
}

interface LoadedContext {
  /** Every extension in the order Asterisk tries them. */
  readonly extensions: readonly DialplanExtension[];
  /** Literal names, for the common exact lookup; each list keeps the overall order. */
  readonly byName: ReadonlyMap<string, readonly DialplanExtension[]>;
  readonly patterns: readonly DialplanExtension[];
  readonly includes: readonly ParsedInclude[];
}

/** Picks what a search is after from a matching extension; `undefined` lets the search go on. */
type Selector<T> = (extension: DialplanExtension) => T | undefined;

export class Dialplan {
  /** Initial global variables from `[globals]`. */
  readonly globals: ReadonlyMap<string, string>;
  /** Settings from `[general]`, uninterpreted. */
  readonly general: ReadonlyMap<string, string>;
  private readonly loaded = new Map<string, LoadedContext>();
  private readonly isIncludeActive: (include: ParsedInclude, context: string) => boolean;

  static parse(text: string, file = 'extensions.conf', options: DialplanOptions = {}): Dialplan {
    return new Dialplan(parseDialplan(text, file), options);
  }

  constructor(parsed: ParsedDialplan, options: DialplanOptions = {}) {
    this.globals = parsed.globals;
    this.general = parsed.general;
    this.isIncludeActive = options.isIncludeActive ?? (() => true);
    for (const context of parsed.contexts) {
      const extensions = context.extensions
        .map((extension) => new DialplanExtension(context.name, parsed.file, extension))
        .sort(DialplanExtension.compare);
      const byName = new Map<string, DialplanExtension[]>();
      for (const extension of extensions) {
        if (extension.isPattern) continue;
        const sameName = byName.get(extension.name);
        if (sameName) sameName.push(extension);
        else byName.set(extension.name, [extension]);
      }
      this.loaded.set(context.name, {
        extensions,
        byName,
        patterns: extensions.filter((extension) => extension.isPattern),
        includes: context.includes,
      });
    }
  }

  contexts(): string[] {
    return [...this.loaded.keys()];
  }

  hasContext(context: string): boolean {
    return this.loaded.has(context);
  }

  /** The context's own extension names (not its includes'), in the order they are tried. */
  extensions(context: string): string[] {
    return this.loaded.get(context)?.extensions.map((extension) => extension.name) ?? [];
  }

  /**
   * The step a channel in `context` at `exten` (the dialed string) runs at `priority`. As in
   * Asterisk, an extension lacking that priority does not hide a less specific one that has it.
   */
  find(context: string, exten: string, priority: number, callerId?: string): DialplanStep | undefined {
    return this.search(context, exten, callerId, 'exact', (extension) => extension.step(priority));
  }

  /** The priority carrying `label` in the extension `exten` reaches. */
  findLabel(context: string, exten: string, label: string, callerId?: string): number | undefined {
    return this.search(context, exten, callerId, 'exact', (extension) => extension.priorityOf(label));
  }

  /** `priority + 1` if that step exists. Asterisk does not skip gaps: a missing priority ends the extension. */
  nextPriority(context: string, exten: string, priority: number, callerId?: string): number | undefined {
    return this.find(context, exten, priority + 1, callerId) ? priority + 1 : undefined;
  }

  exists(context: string, exten: string, priority = 1, callerId?: string): boolean {
    return this.find(context, exten, priority, callerId) !== undefined;
  }

  /**
   * The extension (name or `_` pattern) a call to `dialed` would start in: an exact name beats
   * any pattern, the most specific pattern beats the rest, and includes come last.
   */
  matchExtension(context: string, dialed: string, callerId?: string): string | undefined {
    return this.find(context, dialed, 1, callerId)?.extension;
  }

  /** Whether `dialed` matches now or could after more digits (Asterisk's canmatch). */
  canMatch(context: string, dialed: string, callerId?: string): boolean {
    return this.search(context, dialed, callerId, 'any', (extension) => extension.step(1)) !== undefined;
  }

  /** Whether more digits could still reach an extension (Asterisk's matchmore), e.g. to keep collecting. */
  matchMore(context: string, dialed: string, callerId?: string): boolean {
    return this.search(context, dialed, callerId, 'more', (extension) => extension.step(1)) !== undefined;
  }

  /** The device state expression of the `hint` for `exten`. */
  hint(context: string, exten: string): string | undefined {
    return this.search(context, exten, undefined, 'exact', (extension) => extension.hint);
  }

  /** Every hint of every context, as written (extensions with a hint that are not patterns). */
  hints(): { context: string; exten: string; hint: string }[] {
    const hints: { context: string; exten: string; hint: string }[] = [];
    for (const [context, loaded] of this.loaded) {
      for (const extension of loaded.extensions) {
        if (extension.hint !== undefined && !extension.isPattern) hints.push({ context, exten: extension.name, hint: extension.hint });
      }
    }
    return hints;
  }

  private search<T>(
    context: string,
    dialed: string,
    callerId: string | undefined,
    mode: MatchMode,
    pick: Selector<T>,
  ): T | undefined {
    return this.searchContext(context, stripSeparators(dialed), callerId, mode, pick, new Set());
  }

  private searchContext<T>(
    contextName: string,
    dialed: string,
    callerId: string | undefined,
    mode: MatchMode,
    pick: Selector<T>,
    visited: Set<string>,
  ): T | undefined {
    if (visited.has(contextName)) return undefined;
    const context = this.loaded.get(contextName);
    if (!context) return undefined;

    const candidates = mode === 'exact' && !dialed.startsWith('_') ? this.exactCandidates(context, dialed) : [context.extensions];
    for (const list of candidates) {
      for (const extension of list) {
        const outcome = extension.match(dialed, mode);
        if (outcome === 'none' || !extension.acceptsCaller(callerId)) continue;
        // A `!` pattern matching already means no more digits are wanted here, includes or not.
        if (outcome === 'early' && mode === 'more') return undefined;
        const found = pick(extension);
        if (found !== undefined) return found;
      }
    }

    visited.add(contextName);
    for (const include of context.includes) {
      if (!this.isIncludeActive(include, contextName)) continue;
      const found = this.searchContext(include.context, dialed, callerId, mode, pick, visited);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** Literal names sort before patterns and only an equal name matches exactly, so skip the rest. */
  private exactCandidates(context: LoadedContext, dialed: string): (readonly DialplanExtension[])[] {
    const named = context.byName.get(dialed);
    return named ? [named, context.patterns] : [context.patterns];
  }
}
