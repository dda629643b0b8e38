// The resources this server serves: the declared ones plus `system`, the spec's name for the
// server-management resource, derived from `asterisk` so both names share one implementation.
import { DECLARED_RESOURCES, RESOURCE_LIST } from '../spec/index.ts';
import type { ResourceDecl } from '../spec/types.ts';

function systemFromAsterisk(asterisk: ResourceDecl): ResourceDecl {
  const rename = (path: string): string =>
    path.startsWith('/asterisk/config/dynamic/') ? path.replace('/asterisk/config/dynamic/', '/system/') : path.replace(/^\/asterisk\//, '/system/');
  return {
    ...asterisk,
    name: 'system',
    description: 'Server management (the same operations as asterisk, under /system)',
    operations: asterisk.operations.map((operation) => ({ ...operation, path: rename(operation.path) })),
  };
}

export const SERVED_RESOURCES: readonly ResourceDecl[] = [...RESOURCE_LIST, systemFromAsterisk(DECLARED_RESOURCES.asterisk)];

/** Resources served by the handlers of another resource. */
export const HANDLER_SOURCE: Readonly<Record<string, string>> = { system: 'asterisk' };
