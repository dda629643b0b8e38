// The global regcontext (res_pjsip's persistent endpoint state): while an endpoint is online (a
// contact registered, or a static one found reachable) the context holds
// `exten => <endpoint>,1,Noop(<endpoint>)`, added with the registrar PJSIP and removed when the
// endpoint goes offline. The context itself exists, empty, as soon as regcontext is set, and a
// changed regcontext removes the old one with everything PJSIP put there (config_global.c).
import type { RuntimeExtensions } from '../../core/runtime-extensions.ts';

const REGISTRAR = 'PJSIP';

export class RegContext {
  readonly #extensions: RuntimeExtensions;
  #context: string | undefined;
  /** Endpoints whose extension is in the context now. */
  readonly #added = new Set<string>();

  constructor(extensions: RuntimeExtensions) {
    this.#extensions = extensions;
  }

  /** Brings the context in line with `regcontext` and the endpoints `online` now. */
  update(regcontext: string | undefined, online: ReadonlySet<string>): void {
    const wanted = regcontext || undefined;
    if (wanted !== this.#context) {
      this.close();
      this.#context = wanted;
      if (wanted) this.#extensions.createContext(wanted, REGISTRAR);
    }
    const context = this.#context;
    if (!context) return;
    for (const endpoint of this.#added) {
      if (online.has(endpoint)) continue;
      this.#extensions.remove(context, endpoint, REGISTRAR);
      this.#added.delete(endpoint);
    }
    for (const endpoint of online) {
      if (this.#added.has(endpoint)) continue;
      // Refused when the table is full or the extension is there already: tried again at the next change.
      if (this.#extensions.add(context, endpoint, 'Noop', endpoint, REGISTRAR)) this.#added.add(endpoint);
    }
  }

  /** Removes the context and what PJSIP added to it (the technology stops, or regcontext changed). */
  close(): void {
    if (this.#context) this.#extensions.destroyContext(this.#context, REGISTRAR);
    this.#context = undefined;
    this.#added.clear();
  }
}
