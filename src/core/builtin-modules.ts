// The modules every Patchbay server has. ARI resource modules gate their REST resource (the
// interface layer answers 404 while one is not running); the others are switches that the
// subsystems they name consult through `ModuleRegistry.isRunning`.
import type { ModuleDefinition, ModuleRegistry } from './modules.ts';

/** The ARI resources, each served while its `res_ari_<name>.so` module runs. */
export const ARI_RESOURCE_NAMES = [
  'asterisk',
  'endpoints',
  'channels',
  'bridges',
  'recordings',
  'sounds',
  'playbacks',
  'device_states',
  'mailboxes',
  'events',
  'applications',
] as const;

/** The module of an ARI resource; accepts declaration names too (`deviceStates` → `res_ari_device_states.so`). */
export function ariResourceModuleName(resource: string): string {
  return `res_ari_${resource.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)}.so`;
}

export const MODULE_NAMES = {
  ari: 'res_ari.so',
  sqliteConfig: 'res_patchbay_sqlite_config.so',
  musicOnHold: 'res_musiconhold.so',
  stasis: 'app_stasis.so',
  stasisRecording: 'res_stasis_recording.so',
  stasisPlayback: 'res_stasis_playback.so',
  stasisBroadcast: 'res_stasis_broadcast.so',
} as const;

export interface BuiltinModuleHooks {
  /** Lets the SQLite configuration backend take writes, or makes it refuse them. */
  setSqliteConfigWrites(enabled: boolean): void;
}

/** A module whose whole state is the registry's Running flag, until its subsystem hooks in. */
function switchModule(name: string, description: string, options: { reloadable?: boolean } = {}): ModuleDefinition {
  return {
    name,
    description,
    supportLevel: 'core',
    load() {},
    unload() {},
    ...(options.reloadable ? { reload() {} } : {}),
  };
}

export function registerBuiltinModules(registry: ModuleRegistry, hooks: BuiltinModuleHooks): void {
  registry.register({
    ...switchModule(MODULE_NAMES.ari, 'Asterisk RESTful Interface', { reloadable: true }),
    // Without it nothing could ask for it to be loaded again.
    canUnload: () => false,
  });
  for (const resource of ARI_RESOURCE_NAMES) {
    const definition = switchModule(ariResourceModuleName(resource), `ARI resource: ${resource}`);
    // The management resource is the only way to load modules again (there is no CLI): unloading
    // it would lock every client out of module management until a restart.
    registry.register(resource === 'asterisk' ? { ...definition, canUnload: () => false } : definition);
  }
  registry.register({
    name: MODULE_NAMES.sqliteConfig,
    description: 'SQLite backend for dynamic configuration objects',
    supportLevel: 'core',
    load: () => hooks.setSqliteConfigWrites(true),
    unload: () => hooks.setSqliteConfigWrites(false),
  });
  registry.register(switchModule(MODULE_NAMES.musicOnHold, 'Music On Hold Resource', { reloadable: true }));
  registry.register(switchModule(MODULE_NAMES.stasis, 'Stasis dialplan application'));
  registry.register(switchModule(MODULE_NAMES.stasisRecording, 'Stasis application recording support'));
  registry.register(switchModule(MODULE_NAMES.stasisPlayback, 'Stasis application playback support'));
  // StasisBroadcast() and POST /events/claim: while it is not running, the application sets
  // STASISSTATUS=FAILED and a claim answers 501, as in Asterisk.
  registry.register({ ...switchModule(MODULE_NAMES.stasisBroadcast, 'Stasis application broadcast support'), supportLevel: 'extended' });
}
