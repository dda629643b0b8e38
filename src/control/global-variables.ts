// Setting a global variable for ARI. As pbx_builtin_setvar_helper does, a name ending in `)`
// writes a dialplan function (`DB(family/key)`) through the core's function registry; anything
// else is a global variable. The choice spans two subsystems, so it is one named operation here.
import type { GlobalVariables } from '../core/global-vars.ts';
import { checkVariable } from '../core/variable-limits.ts';
import { parseFunctionCall, type FunctionRegistry } from '../pbx/function-registry.ts';

export interface GlobalVariableServices {
  readonly functions: FunctionRegistry;
  readonly globalVars: GlobalVariables;
}

/** Sets (or, with `value` undefined, unsets) a global variable, or writes a function without a channel. */
export function setGlobalVariable(services: GlobalVariableServices, name: string, value: string | undefined): void {
  const call = name.endsWith(')') ? parseFunctionCall(name) : undefined;
  if (call) {
    checkVariable(name, value);
    services.functions.writeWithoutChannel(call[0], call[1], value ?? '');
    return;
  }
  services.globalVars.set(name, value);
}
