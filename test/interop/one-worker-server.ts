// The server the main-thread stall tests share: one media worker whatever PATCHBAY_MEDIA_WORKERS
// says, phone alice (u-law) calling into [phones], and the worker already running, since a call
// made while it still loads runs its stream on the main thread and shows nothing of the crossing.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { RawPhone } from './raw-phone.ts';

/** Opens `phone`, starts the server with `extensions` in [phones] and waits until its media worker runs. */
export async function startOneWorkerServer(prefix: string, extensions: readonly string[], phone: RawPhone): Promise<{ work: string; server: TestServer }> {
  const work = mkdtempSync(join(tmpdir(), `patchbay-${prefix}-`));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, ['[phones]', ...extensions, ''].join('\n'));
  await phone.open();
  const server = await startTestServer({
    media: { workers: 1 },
    config_objects: { res_pjsip: { endpoint: { alice: { context: 'phones', allow: 'ulaw' } } } },
    dialplan: { file: dialplanFile },
  } as never);
  phone.serverPort = server.core.pjsip.port;
  const deadline = Date.now() + 60_000;
  while (!server.core.pjsip.mediaWorkers?.loads().some((load) => load.running)) {
    assert.ok(Date.now() < deadline, 'the media worker started');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { work, server };
}
