// A member whose NATS cannot be reached at start does not start (as a taken HTTP port): it says
// why, and leaves nothing running behind.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freePort } from '../helpers/ports.ts';
import { startTestServer } from '../helpers/server.ts';

describe('cluster start', () => {
  it('fails when NATS is unreachable, and a server without cluster settings never connects', async () => {
    const port = await freePort();
    await assert.rejects(startTestServer({ cluster: { nats_url: `nats://127.0.0.1:${port}` } }), /CONNECTION_REFUSED|ECONNREFUSED|connect/i);
    const single = await startTestServer();
    try {
      assert.equal(single.cluster, undefined);
      assert.equal((await fetch(`${single.url}/admin/cluster`, { headers: { authorization: `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}` } })).status, 404);
      assert.doesNotMatch(await (await fetch(`${single.url}/metrics`)).text(), /patchbay_cluster_/);
    } finally {
      await single.stop();
    }
  });
});
