// The object types the store knows: those the server's technologies declare (registered first, by
// whoever builds the core), plus whatever else the configuration file defines, so every object the
// operator configured can be read through ARI.
import type { DynamicConfig } from './store.ts';
import type { FileBackend } from './file-backend.ts';
import type { ConfigTypeRegistration } from './types.ts';

/** Registers declared types; a class/type registered twice is a ConflictError. */
export function registerConfigTypes(store: DynamicConfig, types: readonly ConfigTypeRegistration[]): void {
  for (const { configClass, objectType, definition } of types) store.registerType(configClass, objectType, definition);
}

/**
 * Registers, as read-only types, the class/type pairs the configuration file uses but no code
 * registered; their fields are those the file's objects set, with empty defaults.
 */
export function registerFileOnlyTypes(store: DynamicConfig, file: FileBackend): void {
  for (const { configClass, objectType, fieldNames } of file.objectTypes()) {
    if (store.hasType(configClass, objectType)) continue;
    store.registerType(configClass, objectType, {
      backends: ['file'],
      fields: Object.fromEntries(fieldNames.map((name) => [name, { default: '' }])),
    });
  }
}
