// The kernel's dialplan as it is loaded and indexed: extensions.conf (or the embedded default) read
// and parsed, the extensions the parking lots and running technologies add merged in (res_parking's
// and res_pjsip's registrars), includes with a time restriction checked at lookup, and [globals]
// made global variables. Kept apart from kernel.ts so that the kernel's wiring stays readable.
import { readFileSync } from 'node:fs';
import { Dialplan } from '../dialplan/dialplan.ts';
import { DEFAULT_DIALPLAN, DEFAULT_DIALPLAN_FILE } from '../dialplan/default-dialplan.ts';
import { includeReader } from '../dialplan/includes.ts';
import type { ParsedDialplan, ParsedInclude } from '../dialplan/parsed.ts';
import { parseDialplan } from '../dialplan/parser.ts';
import { parseTimeSpec, timeSpecMatches, type TimeSpec } from '../dialplan/time-spec.ts';
import { InvalidError } from './errors.ts';
import type { GlobalVariables } from './global-vars.ts';
import { withParkingExtensions } from './parking/parking-extensions.ts';
import type { ParkingLots } from './parking/parking-lots.ts';
import type { RuntimeExtensions } from './runtime-extensions.ts';

interface Warner {
  warn(message: string): void;
}

/** The configured extensions.conf, or the embedded default. A syntax error names file and line. */
export function readDialplan(file: string | null | undefined): ParsedDialplan {
  return file ? parseDialplan(readFileSync(file, 'utf8'), file, { include: includeReader(file) }) : parseDialplan(DEFAULT_DIALPLAN, DEFAULT_DIALPLAN_FILE);
}

/** The dialplan as read, with the extensions the parking lots register (res_parking's registrar) and the run-time ones. */
export function indexDialplan(parsed: ParsedDialplan, parking: ParkingLots, runtime: RuntimeExtensions, log: Warner): Dialplan {
  const withParking = withParkingExtensions(parsed, parking.config, parking.parkDialExtensions, (line) => log.warn(line));
  const merged = runtime.mergeInto(withParking);
  return new Dialplan(merged, { isIncludeActive: (include) => isIncludeActiveNow(include, log) });
}

/** [globals] become global variables, as pbx_config sets them (a reload overwrites, clearglobalvars=no). */
export function setDialplanGlobals(dialplan: Dialplan, globals: GlobalVariables, log: Warner): void {
  let refused = 0;
  let reason = '';
  for (const [name, value] of dialplan.globals) {
    try {
      globals.set(name, value);
    } catch (error) {
      // More [globals] than MAX_GLOBAL_VARIABLES (or a name or value too long): the dialplan still loads.
      if (!(error instanceof InvalidError)) throw error;
      refused += 1;
      reason ||= error.message;
    }
  }
  if (refused > 0) log.warn(`[globals]: ${refused} variables not set (${reason})`);
}

/** Parsed time restrictions of includes, by their text (a bad one is reported once, then never applies). */
const includeTimes = new Map<string, TimeSpec | null>();

function isIncludeActiveNow(include: ParsedInclude, log: { warn(message: string): void }): boolean {
  if (!include.timing) return true;
  let spec = includeTimes.get(include.timing);
  if (spec === undefined) {
    try {
      spec = parseTimeSpec(include.timing);
    } catch (error) {
      log.warn(`include => ${include.context},${include.timing} at line ${include.line}: ${(error as Error).message}; the include never applies`);
      spec = null;
    }
    if (includeTimes.size < 1024) includeTimes.set(include.timing, spec);
  }
  return spec !== null && timeSpecMatches(spec);
}
