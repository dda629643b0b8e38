// What PJSIP adds to the core when it starts, through its context (the technology seam): the
// endpoint list `PJSIP/<id>`, the PJSIP_HEADER(S) and PJSIP_RESPONSE_HEADER(S) functions, the
// object functions that read its live endpoints, AORs and contacts (object-functions.ts), the URI
// parser (uri-functions.ts) and the SIPAddHeader/SIPRemoveHeader applications. CHANNEL(pjsip,item) needs no registration: it is the
// call's channelInfo (call.ts). The docs' lists take the same functions and applications
// (src/control/dialplan-catalog.ts), so what is documented is what a running server has.
import type { TechnologyApplication, TechnologyContext, TechnologyFunction } from '../../core/channels/technology.ts';
import { sipAddHeader, sipRemoveHeader } from './dialplan-apps.ts';
import { sipFunctions } from './dialplan-functions.ts';
import { PjsipEndpoints } from './endpoints.ts';
import { pjsipObjectFunctions, type PjsipObjectSource } from './object-functions.ts';
import { uriFunctions } from './uri-functions.ts';

/** Where dialplan functions and applications go: a technology's context, or the docs' catalog. */
export interface DialplanRegistrar {
  registerFunction(fn: TechnologyFunction): void;
  registerApplication(application: TechnologyApplication): void;
}

/** PJSIP's dialplan functions and applications; `objects`: the running technology's (none in the docs' catalog). */
export function registerPjsipDialplan(registrar: DialplanRegistrar, objects: () => PjsipObjectSource | undefined = () => undefined): void {
  for (const fn of [...sipFunctions, ...pjsipObjectFunctions(objects), ...uriFunctions]) registrar.registerFunction(fn);
  for (const application of [sipAddHeader, sipRemoveHeader]) registrar.registerApplication(application);
}

/** Everything PJSIP adds to the core, for as long as the technology runs (the context undoes it at stop). */
export function registerPjsipWithCore(context: TechnologyContext, objects: () => PjsipObjectSource | undefined): void {
  const busyAt = (id: string) => objects()?.config.endpoints.get(id)?.deviceStateBusyAt ?? 0;
  context.endpoints.register(new PjsipEndpoints(context.configObjects, busyAt));
  registerPjsipDialplan(context, objects);
}
