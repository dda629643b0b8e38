// Server management (/asterisk): system information, modules, log channels, global variables and
// dynamic configuration objects. Core failures surface as CoreErrors, mapped to statuses by the dispatcher.
import { AriError, defineHandlers } from '../handler.ts';
import type { Core } from '../../control/core.ts';
import type { ConfigTuple } from '../../core/dynamic-config/types.ts';
import { describeBuild, patchbayVersion, processIdentity } from '../../core/system-info.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { setGlobalVariable } from '../../control/global-variables.ts';

const INFO_SECTIONS = ['build', 'system', 'config', 'status'] as const;
type InfoSection = (typeof INFO_SECTIONS)[number];

/** The body's `fields`: a list of {attribute, value} string pairs, or absent. */
function parseConfigTuples(fields: unknown): ConfigTuple[] | undefined {
  if (fields === undefined || fields === null) return undefined;
  if (!Array.isArray(fields)) throw new AriError(400, 'fields: must be a list of {attribute, value} objects');
  return fields.map((item: unknown, index) => {
    const tuple = item as { attribute?: unknown; value?: unknown } | null;
    if (tuple === null || typeof tuple !== 'object' || typeof tuple.attribute !== 'string' || typeof tuple.value !== 'string') {
      throw new AriError(400, `fields[${index}]: must be an object with string attribute and value`);
    }
    return { attribute: tuple.attribute, value: tuple.value };
  });
}

/** Unknown section names are ignored, as in Asterisk; no sections at all means every section. */
function requestedSections(only: readonly string[] | undefined): Set<InfoSection> {
  const wanted = new Set((only ?? []).map((section) => section.toLowerCase()));
  const sections = INFO_SECTIONS.filter((section) => wanted.has(section));
  return new Set(wanted.size === 0 ? INFO_SECTIONS : sections);
}

function configSection(core: Core) {
  const { systemName, language, maxChannels, maxOpenFiles, maxLoad } = core.config;
  // Zero means unlimited; ARI leaves such limits out rather than reporting 0.
  return {
    name: systemName,
    default_language: language,
    ...(maxChannels ? { max_channels: maxChannels } : {}),
    ...(maxOpenFiles ? { max_open_files: maxOpenFiles } : {}),
    ...(maxLoad ? { max_load: maxLoad } : {}),
    setid: processIdentity(),
  };
}

interface SystemInformation {
  readonly build: ReturnType<typeof describeBuild>;
  readonly system: { version: string; entity_id: string };
  readonly config: ReturnType<typeof configSection>;
  readonly status: { startup_time: string; last_reload_time: string };
}

/** The answer changes only on a reload, so it is built once per reload rather than per request. */
const informationCache = new WeakMap<Core, { reloadedAt: Date; info: SystemInformation }>();

function systemInformation(core: Core): SystemInformation {
  const cached = informationCache.get(core);
  if (cached && cached.reloadedAt === core.lastReloadAt) return cached.info;
  const info: SystemInformation = {
    build: describeBuild(),
    system: { version: patchbayVersion(), entity_id: core.serverId },
    config: configSection(core),
    status: { startup_time: formatAriDate(core.startedAt), last_reload_time: formatAriDate(core.lastReloadAt) },
  };
  informationCache.set(core, { reloadedAt: core.lastReloadAt, info });
  return info;
}

export const asteriskHandlers = defineHandlers('asterisk', {
  getObject: ({ configClass, objectType, id }, { core }) => core.dynamicConfig.get(configClass, objectType, id),

  updateObject: ({ configClass, objectType, id, fields }, { core }) =>
    core.dynamicConfig.update(configClass, objectType, id, parseConfigTuples(fields)),

  deleteObject: ({ configClass, objectType, id }, { core }) => {
    core.dynamicConfig.delete(configClass, objectType, id);
  },

  getInfo: ({ only }, { core }) => {
    const info = systemInformation(core);
    if (only === undefined) return info;
    const sections = requestedSections(only);
    return {
      ...(sections.has('build') ? { build: info.build } : {}),
      ...(sections.has('system') ? { system: info.system } : {}),
      ...(sections.has('config') ? { config: info.config } : {}),
      ...(sections.has('status') ? { status: info.status } : {}),
    };
  },

  ping: (_params, { core }) => ({ ping: 'pong', timestamp: formatAriDate(), asterisk_id: core.serverId }),

  listModules: (_params, { core }) => core.modules.list(),

  getModule: ({ moduleName }, { core }) => core.modules.get(moduleName),

  loadModule: async ({ moduleName }, { core }) => {
    await core.modules.load(moduleName);
  },

  unloadModule: async ({ moduleName }, { core }) => {
    await core.modules.unload(moduleName);
  },

  reloadModule: async ({ moduleName }, { core }) => {
    await core.modules.reload(moduleName);
  },

  listLogChannels: (_params, { core }) => core.logChannels.list(),

  addLog: ({ logChannelName, configuration }, { core }) => {
    if (configuration.trim() === '') throw new AriError(400, 'Configuration levels are required');
    core.logChannels.create(logChannelName, configuration);
  },

  deleteLog: ({ logChannelName }, { core }) => {
    core.logChannels.delete(logChannelName);
  },

  rotateLog: async ({ logChannelName }, { core }) => {
    await core.logChannels.rotate(logChannelName);
  },

  getGlobalVar: ({ variable }, { core }) => {
    if (variable === '') throw new AriError(400, 'Variable name is required');
    return { value: core.globalVars.get(variable) ?? '' };
  },

  setGlobalVar: ({ variable, value }, { core }) => {
    if (variable === '') throw new AriError(400, 'Variable name is required');
    // A name ending in `)` writes a function (`DB(family/key)`), as in Asterisk.
    setGlobalVariable(core, variable, value);
  },
});
