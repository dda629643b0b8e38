// The extensions res_parking registers in the dialplan (res_parking.c's
// parking_lot_cfg_create_extensions), added to the parsed dialplan before it is indexed: in each
// lot's context (made when the dialplan has none), its parkext runs Park() (with the lot's name as
// data only when parkext_exclusive), each space runs ParkedCall(<lot>,<space>) and, with
// parkinghints, carries the hint park:<space>@<context>; and the `park-dial` context holds one
// extension per parker whose parked call came back, Dial(<parker>,<comebackdialtime>). An
// extension the dialplan already has wins: Asterisk keeps a compatible Park extension and refuses
// the lot's spaces over an existing one (the warning says so).
import type { ParsedContext, ParsedDialplan, ParsedExtension } from '../../dialplan/parsed.ts';
import type { ParkingConfig } from './parking-conf.ts';
import { PARK_DIAL_CONTEXT } from './parking-lots.ts';

const FILE = 'res_parking.conf';

function step(app: string, appData: string): ParsedExtension['steps'][number] {
  return { priority: 1, app, appData, line: 0, file: FILE };
}

/** `parsed` with the parking lots' extensions and the park-dial ones; `warn` hears of those left out. */
export function withParkingExtensions(
  parsed: ParsedDialplan,
  config: ParkingConfig,
  parkDial: ReadonlyMap<string, string>,
  warn: (line: string) => void,
): ParsedDialplan {
  const added = new Map<string, ParsedExtension[]>();
  const exists = (context: string, exten: string): boolean =>
    (parsed.contexts.find((c) => c.name === context)?.extensions.some((e) => e.name === exten) ?? false) ||
    (added.get(context)?.some((e) => e.name === exten) ?? false);
  const add = (context: string, extension: ParsedExtension): void => {
    const list = added.get(context) ?? [];
    list.push(extension);
    added.set(context, list);
  };
  for (const lot of config.lots.values()) {
    if (lot.parkext === '') continue;
    if (!exists(lot.context, lot.parkext)) add(lot.context, { name: lot.parkext, steps: [step('Park', lot.parkextExclusive ? lot.name : '')], line: 0 });
    else if (lot.parkextExclusive) warn(`${FILE}: parking lot ${lot.name}: ${lot.parkext}@${lot.context} exists already; the lot's exclusive parkext is not added`);
    for (let space = lot.parkposStart; space <= lot.parkposStop; space++) {
      const exten = String(space);
      if (exists(lot.context, exten)) {
        warn(`${FILE}: parking lot ${lot.name}: ${exten}@${lot.context} exists already; the lot's space extensions from there on are not added`);
        break;
      }
      add(lot.context, {
        name: exten,
        steps: [step('ParkedCall', `${lot.name},${exten}`)],
        ...(lot.parkingHints ? { hint: `park:${exten}@${lot.context}` } : {}),
        line: 0,
      });
    }
  }
  for (const [flat, dial] of parkDial) {
    if (!exists(PARK_DIAL_CONTEXT, flat)) add(PARK_DIAL_CONTEXT, { name: flat, steps: [step('Dial', dial)], line: 0 });
  }
  if (added.size === 0) return parsed;
  const contexts: ParsedContext[] = parsed.contexts.map((context) => {
    const more = added.get(context.name);
    if (!more) return context;
    added.delete(context.name);
    return { ...context, extensions: [...context.extensions, ...more] };
  });
  for (const [name, extensions] of added) contexts.push({ name, line: 0, extensions, includes: [], ignorePatterns: [], switches: [] });
  return { ...parsed, contexts };
}
