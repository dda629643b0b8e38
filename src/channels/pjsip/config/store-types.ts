// The res_pjsip types of the dynamic configuration store (ARI's /asterisk/config/dynamic), derived
// from the declarations: the same attribute names, Asterisk's defaults for unset fields, and a PUT
// refused for exactly the values pjsip.conf would refuse. The server hands these to the core
// before the configuration file's objects are loaded (core/dynamic-config knows no technology).
import type { BackendName, ConfigTypeRegistration, FieldSpec } from '../../../core/dynamic-config/types.ts';
import { registerConfigTypes } from '../../../core/dynamic-config/builtin-types.ts';
import type { DynamicConfig } from '../../../core/dynamic-config/store.ts';
import { PJSIP_TYPES } from './declarations.ts';

export const PJSIP_CONFIG_CLASS = 'res_pjsip';

/**
 * Objects that only make sense at start (a transport's sockets, the global and system sections) are
 * read from files only, and so are ACLs (res_pjsip_acl reads pjsip.conf only: a PUT must not open or
 * shut the door); the rest may also be created, changed and deleted through ARI (SQLite).
 */
const FILE_ONLY_TYPES = new Set(['transport', 'global', 'domain_alias', 'system', 'acl']);

export function pjsipConfigTypes(): ConfigTypeRegistration[] {
  return [...PJSIP_TYPES.values()].map((declared) => {
    const fields: Record<string, FieldSpec> = {};
    for (const [name, option] of declared.options) {
      fields[name] = { default: option.default, validate: (value) => declared.check(name, value) };
    }
    const backends: readonly BackendName[] = FILE_ONLY_TYPES.has(declared.type) ? ['file'] : ['file', 'sqlite'];
    return { configClass: PJSIP_CONFIG_CLASS, objectType: declared.type, definition: { backends, fields } };
  });
}

/** Registers the res_pjsip types with a store (tests that build a store of their own). */
export function registerPjsipConfigTypes(store: DynamicConfig): void {
  registerConfigTypes(store, pjsipConfigTypes());
}
