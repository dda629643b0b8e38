// The read-only dynamic configuration objects given in the settings file (`config_objects`):
// classes of object types of ids of fields, each level checked (no empty, path-like or
// prototype-polluting names) and frozen, every value a string.
import { describe, isPlainObject, type Raw, type ReadContext, type Seg } from './schema.ts';

/** Names that must never become keys of a plain object read from the settings. */
export const RESERVED_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

export type ConfigObjects = Readonly<
  Record<string, Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, string>>>>>>>
>;

export function readConfigObjects(v: unknown, root: readonly Seg[], ctx: ReadContext): ConfigObjects {
  const level = (p: readonly Seg[], x: unknown, what: string): Raw => {
    if (x === undefined || x === null) return {};
    if (!isPlainObject(x)) ctx.fail(p, `must be a mapping of ${what}, got ${describe(x)}`);
    for (const k of Object.keys(x)) {
      if (k.trim() === '' || k.includes('/') || RESERVED_NAMES.has(k)) ctx.fail([...p, k], `'${k}' is not allowed as a ${what.replace(/s$/, '')} name`);
    }
    return x;
  };
  const out: Record<string, Record<string, Record<string, Record<string, string>>>> = {};
  for (const [cls, types] of Object.entries(level(root, v, 'config classes'))) {
    const outTypes: Record<string, Record<string, Record<string, string>>> = {};
    for (const [type, ids] of Object.entries(level([...root, cls], types, 'object types'))) {
      const outIds: Record<string, Record<string, string>> = {};
      for (const [id, fields] of Object.entries(level([...root, cls, type], ids, 'object ids'))) {
        const outFields: Record<string, string> = {};
        for (const [field, value] of Object.entries(level([...root, cls, type, id], fields, 'fields'))) {
          if (typeof value === 'string') outFields[field] = value;
          else if (typeof value === 'number' || typeof value === 'boolean') outFields[field] = String(value);
          else ctx.fail([...root, cls, type, id, field], `must be a string, number or boolean, got ${describe(value)}`);
        }
        outIds[id] = Object.freeze(outFields);
      }
      outTypes[type] = Object.freeze(outIds);
    }
    out[cls] = Object.freeze(outTypes);
  }
  return Object.freeze(out);
}
