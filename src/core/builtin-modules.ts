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
  stasisCore: 'res_stasis.so',
  stasis: 'app_stasis.so',
  stasisRecording: 'res_stasis_recording.so',
  stasisPlayback: 'res_stasis_playback.so',
  stasisBroadcast: 'res_stasis_broadcast.so',
  stasisAnswer: 'res_stasis_answer.so',
  stasisSnoop: 'res_stasis_snoop.so',
  stasisDeviceState: 'res_stasis_device_state.so',
  stasisMailbox: 'res_stasis_mailbox.so',
} as const;

/**
 * What each ARI resource module requires besides res_stasis.so, as Asterisk's `.requires` say.
 * (res_ari.so is left out of every list: docs/differences.md.)
 */
const ARI_RESOURCE_REQUIRES: { readonly [R in (typeof ARI_RESOURCE_NAMES)[number]]?: readonly string[] } = {
  bridges: [MODULE_NAMES.stasisRecording, MODULE_NAMES.stasisPlayback],
  channels: [MODULE_NAMES.stasisAnswer, MODULE_NAMES.stasisPlayback, MODULE_NAMES.stasisRecording, MODULE_NAMES.stasisSnoop],
  device_states: [MODULE_NAMES.stasisDeviceState],
  mailboxes: [MODULE_NAMES.stasisMailbox],
  playbacks: [MODULE_NAMES.stasisPlayback],
  recordings: [MODULE_NAMES.stasisRecording],
};

export interface BuiltinModuleHooks {
  /** Lets the SQLite configuration backend take writes, or makes it refuse them. */
  setSqliteConfigWrites(enabled: boolean): void;
}

/** A module whose whole state is the registry's Running flag, until its subsystem hooks in. */
function switchModule(name: string, description: string, options: { reloadable?: boolean; requires?: readonly string[] } = {}): ModuleDefinition {
  return {
    name,
    description,
    supportLevel: 'core',
    load() {},
    unload() {},
    ...(options.reloadable ? { reload() {} } : {}),
    ...(options.requires ? { requires: options.requires } : {}),
  };
}

export function registerBuiltinModules(registry: ModuleRegistry, hooks: BuiltinModuleHooks): void {
  registry.register({
    ...switchModule(MODULE_NAMES.ari, 'Asterisk RESTful Interface', { reloadable: true }),
    // Without it nothing could ask for it to be loaded again.
    canUnload: () => false,
  });
  // The Stasis modules first: the ARI resources require them. Each is in use while a module that
  // requires it runs, so unloading one under a running resource answers 409, as in Asterisk.
  const stasis = [MODULE_NAMES.stasisCore];
  registry.register(switchModule(MODULE_NAMES.stasisCore, 'Stasis application support'));
  registry.register(switchModule(MODULE_NAMES.stasisRecording, 'Stasis application recording support', { requires: stasis }));
  registry.register(
    switchModule(MODULE_NAMES.stasisPlayback, 'Stasis application playback support', { requires: [...stasis, MODULE_NAMES.stasisRecording] }),
  );
  registry.register(switchModule(MODULE_NAMES.stasisAnswer, 'Stasis application answer support', { requires: stasis }));
  registry.register(switchModule(MODULE_NAMES.stasisSnoop, 'Stasis application snoop support', { requires: stasis }));
  registry.register(switchModule(MODULE_NAMES.stasisDeviceState, 'Stasis application device state support', { requires: stasis }));
  registry.register(switchModule(MODULE_NAMES.stasisMailbox, 'Stasis application mailbox support', { requires: stasis }));
  for (const resource of ARI_RESOURCE_NAMES) {
    const definition = switchModule(ariResourceModuleName(resource), `ARI resource: ${resource}`, {
      requires: [...stasis, ...(ARI_RESOURCE_REQUIRES[resource] ?? [])],
    });
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
  registry.register(switchModule(MODULE_NAMES.stasis, 'Stasis dialplan application', { requires: stasis }));
  // StasisBroadcast() and POST /events/claim: while it is not running, the application sets
  // STASISSTATUS=FAILED and a claim answers 501, as in Asterisk.
  registry.register({
    ...switchModule(MODULE_NAMES.stasisBroadcast, 'Stasis application broadcast support', { requires: stasis }),
    supportLevel: 'extended',
  });
}
