// The started server both live-sweep files drive (live-sweep.test.ts, live-sweep-bounds.test.ts):
// the same endpoints (anonymous callers, a registering `alice`), the same call bound per endpoint,
// a dialplan of the file's own written to a temporary folder, and SIP bounds a file may add.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeepPartialYaml } from '../../../src/config/config.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** alice's password, for the digest answers a sweep computes. */
export const ALICE_PASSWORD = 's3cret';

export interface SweepServer {
  readonly server: TestServer;
  /** Stops the server and removes the temporary folder. */
  stop(): Promise<void>;
}

/**
 * A server whose `[default]` context holds `extensions` (extensions.conf lines), with
 * max_calls_per_endpoint 4 and whatever else `sip` sets.
 */
export async function startSweepServer(folderPrefix: string, extensions: string, sip: NonNullable<DeepPartialYaml['sip']> = {}): Promise<SweepServer> {
  const dir = mkdtempSync(join(tmpdir(), folderPrefix));
  const dialplan = join(dir, 'extensions.conf');
  writeFileSync(dialplan, `[default]\n${extensions}`);
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    const server = await startTestServer({
      dialplan: { file: dialplan },
      sip: { max_calls_per_endpoint: 4, ...sip },
      config_objects: {
        res_pjsip: {
          endpoint: { anonymous: { context: 'default', allow: 'ulaw' }, alice: { context: 'default', allow: 'ulaw', auth: 'alice-auth', aors: 'alice' } },
          auth: { 'alice-auth': { auth_type: 'userpass', username: 'alice', password: ALICE_PASSWORD } },
          aor: { alice: { max_contacts: '5' } },
        },
      },
    });
    return {
      server,
      stop: async () => {
        await server.stop();
        removeDir();
      },
    };
  } catch (error) {
    removeDir();
    throw error;
  }
}

/** Polls `condition` every 50 ms until it holds (true) or `timeoutMs` passed (false). */
export async function pollUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
