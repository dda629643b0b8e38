// The server the raw-peer offer tests call (multipart-offer.test.ts, update-offer.test.ts): an
// anonymous u-law endpoint whose calls to `hold` are answered and kept for a minute, and a
// HostilePeer over UDP to send them whatever bodies the test wants. Their SIPp counterparts are in
// test/interop/sipp-offers.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { HostilePeer } from '../../helpers/hostile-peer.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

export interface HoldServer {
  readonly server: TestServer;
  readonly peer: HostilePeer;
}

/** Registers, in the calling test file, the server and peer started before its tests and stopped after them. */
export function useHoldServer(name: string): HoldServer {
  let dir: string | undefined;
  let server: TestServer | undefined;
  let peer: HostilePeer | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), `patchbay-${name}-`));
    const dialplan = join(dir, 'extensions.conf');
    writeFileSync(dialplan, '[default]\nexten => hold,1,Answer()\n same => n,Wait(60)\n');
    server = await startTestServer({ dialplan: { file: dialplan }, config_objects: { res_pjsip: { endpoint: { anonymous: { context: 'default', allow: 'ulaw' } } } } });
    peer = await HostilePeer.open('UDP', server.core.pjsip.port);
  });

  after(async () => {
    peer?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the hold server starts before the first test');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get peer() {
      return started(peer);
    },
  };
}
