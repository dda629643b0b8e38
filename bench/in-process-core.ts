// The real core started inside the bench's own process (no HTTP, no SIP peers): a throwaway data
// directory, quiet logging, one Stasis application whose deliveries the bench counts or drops, and
// answered calls originated into it (`Local/answer@default`). Shared by the benches that measure
// the kernel itself (bridges.ts, bridge-join.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config/config.ts';
import { PatchbayCore } from '../src/server.ts';
import type { ApplicationSink } from '../src/core/applications.ts';
import type { Channel } from '../src/core/channels/channel.ts';
import { originate } from '../src/control/originate.ts';

export interface InProcessCore {
  readonly core: PatchbayCore;
  /** Originates `Local/answer@default` into the application; resolves with the answered `;1` in Stasis. */
  call(): Promise<Channel>;
  /** Stops the core and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * Starts a core whose data lives in a temporary directory named after `bench`, with the Stasis
 * application `app` registered on `sink` (`subscribeAll`: it gets every event, as a subscribe-all
 * WebSocket would).
 */
export async function startInProcessCore(bench: string, app: string, sink: ApplicationSink, subscribeAll: boolean): Promise<InProcessCore> {
  const dataDir = mkdtempSync(join(os.tmpdir(), `patchbay-bench-${bench}-`));
  const config = loadConfig({
    path: null,
    env: {},
    overrides: { dirs: { data: dataDir }, ari: { developer_mode: false }, logging: { console: false, level: 'warn' } },
  });
  const core = new PatchbayCore({ config, log: pino({ level: 'warn' }) });
  await core.start();
  core.applications.register(app, sink, subscribeAll);
  return {
    core,
    async call() {
      const origination = originate(core, { endpoint: 'Local/answer@default', app });
      const status = await origination.outcome;
      if (status !== 'ANSWER' || !origination.channel.stasis) throw new Error(`originate ended ${status}`);
      return origination.channel;
    },
    async stop() {
      await core.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
