// Device states and the dynamic configuration cluster-wide (docs/cluster.md, "Device states and
// dynamic configuration"): the ARI-controlled (`Stasis:`) and dialplan (`Custom:`) device states,
// and the objects written through `/asterisk/config/dynamic`, are mirrored through two more KV
// buckets exactly as the global variables and astdb are (shared-state.ts: newest write wins, a
// member joining later applies what the buckets hold, hostile entries are ignored). The buckets
// are bounded in bytes and value size: a write beyond them is refused by NATS and stays local.
import type { Kvm } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import { SharedStateMirror } from './shared-state.ts';

/** Bytes a bucket may hold at most (its entries, tombstones included). */
export const DEVICE_STATES_BUCKET_BYTES = 16 * 1024 * 1024;
export const DYNAMIC_CONFIG_BUCKET_BYTES = 64 * 1024 * 1024;
/** Largest value NATS stores in them: a device state is a few bytes; an object's fields a few KiB. */
export const DEVICE_STATE_VALUE_BYTES = 1024;
export const DYNAMIC_CONFIG_VALUE_BYTES = 64 * 1024;

export interface SharedConfig {
  readonly deviceStates: SharedStateMirror;
  readonly dynamicConfig: SharedStateMirror;
}

export async function startSharedConfig(kvm: Kvm, cluster: string, core: Core, log: Logger): Promise<SharedConfig> {
  const deviceStates = new SharedStateMirror({
    kv: await kvm.create(`pb_${cluster}_devstates`, { max_bytes: DEVICE_STATES_BUCKET_BYTES, maxValueSize: DEVICE_STATE_VALUE_BYTES }),
    store: core.deviceStates,
    what: 'device states',
    log,
  });
  const dynamicConfig = new SharedStateMirror({
    kv: await kvm.create(`pb_${cluster}_config`, { max_bytes: DYNAMIC_CONFIG_BUCKET_BYTES, maxValueSize: DYNAMIC_CONFIG_VALUE_BYTES }),
    store: core.dynamicConfig,
    what: 'dynamic configuration',
    log,
  });
  await deviceStates.start();
  await dynamicConfig.start();
  return { deviceStates, dynamicConfig };
}
