// Extensions a module adds to the dialplan while the server runs (Asterisk's ast_add_extension
// with a registrar, as res_pjsip does for a global regcontext), merged into the dialplan read from
// extensions.conf each time it is indexed — so that they survive `dialplan reload`. An extension
// the file already has wins (Asterisk adds a registrar's only when none exists). Bounded: a module
// adds one per object it tracks (an endpoint), and past MAX the addition is refused.
import type { ParsedContext, ParsedDialplan, ParsedExtension } from '../dialplan/parsed.ts';

/** Run-time extensions across all contexts; more are refused. */
export const MAX_RUNTIME_EXTENSIONS = 100_000;

interface RuntimeExtension {
  readonly app: string;
  readonly appData: string;
  readonly registrar: string;
}

export class RuntimeExtensions {
  // context → registrar that made it (contexts may be empty, as ast_context_find_or_create makes them).
  readonly #contexts = new Map<string, string>();
  readonly #extensions = new Map<string, Map<string, RuntimeExtension>>();
  #count = 0;
  readonly #changed: () => void;

  /** `changed` hears of every addition or removal (the dialplan is indexed again). */
  constructor(changed: () => void) {
    this.#changed = changed;
  }

  /** Makes `context` exist even while empty. */
  createContext(context: string, registrar: string): void {
    if (this.#contexts.has(context)) return;
    this.#contexts.set(context, registrar);
    this.#changed();
  }

  /** Removes the context `registrar` made and the extensions it added there. */
  destroyContext(context: string, registrar: string): void {
    const mine = this.#extensions.get(context);
    let changed = false;
    if (mine) {
      for (const [exten, extension] of mine) {
        if (extension.registrar !== registrar) continue;
        mine.delete(exten);
        this.#count -= 1;
        changed = true;
      }
      if (mine.size === 0) this.#extensions.delete(context);
    }
    if (this.#contexts.get(context) === registrar && !this.#extensions.has(context)) {
      this.#contexts.delete(context);
      changed = true;
    }
    if (changed) this.#changed();
  }

  /** Adds `exten,1,app(appData)` to `context`; false when it is there already or the table is full. */
  add(context: string, exten: string, app: string, appData: string, registrar: string): boolean {
    const extensions = this.#extensions.get(context) ?? new Map<string, RuntimeExtension>();
    if (extensions.has(exten) || this.#count >= MAX_RUNTIME_EXTENSIONS) return false;
    extensions.set(exten, { app, appData, registrar });
    this.#extensions.set(context, extensions);
    if (!this.#contexts.has(context)) this.#contexts.set(context, registrar);
    this.#count += 1;
    this.#changed();
    return true;
  }

  /** Removes `exten` from `context` when `registrar` added it. */
  remove(context: string, exten: string, registrar: string): void {
    const extensions = this.#extensions.get(context);
    if (extensions?.get(exten)?.registrar !== registrar) return;
    extensions.delete(exten);
    if (extensions.size === 0) this.#extensions.delete(context);
    this.#count -= 1;
    this.#changed();
  }

  get size(): number {
    return this.#count;
  }

  /** `parsed` with the run-time contexts and extensions; one the file has already wins. */
  mergeInto(parsed: ParsedDialplan): ParsedDialplan {
    if (this.#contexts.size === 0) return parsed;
    const byName = new Map(parsed.contexts.map((context) => [context.name, context]));
    const contexts: ParsedContext[] = [...parsed.contexts];
    for (const name of this.#contexts.keys()) {
      const more: ParsedExtension[] = [];
      const existing = byName.get(name);
      for (const [exten, extension] of this.#extensions.get(name) ?? []) {
        if (existing?.extensions.some((e) => e.name === exten)) continue;
        more.push({ name: exten, steps: [{ priority: 1, app: extension.app, appData: extension.appData, line: 0, file: extension.registrar }], line: 0 });
      }
      if (existing) {
        if (more.length > 0) contexts[contexts.indexOf(existing)] = { ...existing, extensions: [...existing.extensions, ...more] };
      } else {
        contexts.push({ name, line: 0, extensions: more, includes: [], ignorePatterns: [], switches: [] });
      }
    }
    return { ...parsed, contexts };
  }
}
