// Every dialplan function and application a Patchbay server provides: the built-in ones and those
// the built-in channel technologies register when they start. The README's and docs' lists are
// generated from it (scripts/functions-docs.ts, scripts/apps-docs.ts), so what is documented is
// what a running server with all its technologies has.
import type { DocumentedApplication } from '../pbx/apps/docs.ts';
import { dialplanApplications } from '../pbx/apps/index.ts';
import { FunctionRegistry, type RegisteredFunction } from '../pbx/function-registry.ts';
import { registerPjsipDialplan } from '../channels/pjsip/dialplan.ts';

export interface DialplanCatalog {
  readonly functions: readonly RegisteredFunction[];
  readonly applications: readonly DocumentedApplication[];
}

export function dialplanCatalog(): DialplanCatalog {
  const functions = new FunctionRegistry();
  const applications: DocumentedApplication[] = dialplanApplications(() => undefined);
  registerPjsipDialplan({
    registerFunction: (fn) => void functions.register(fn),
    registerApplication: (application) => void applications.push(application),
  });
  return { functions: functions.list(), applications };
}
