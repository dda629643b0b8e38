// Message waiting with a real softphone, baresip 1.0 and its mwi module (RFC 3842): after it
// registers with digest, it SUBSCRIBEs to its own AOR for message-summary (authenticated like an
// INVITE); the AOR has mailboxes=, so the first NOTIFY says no messages, and PUT /ari/mailboxes
// makes the next one say Messages-Waiting: yes with the counts, which baresip prints.
// Skipped with a message when baresip (or its mwi module) is not installed.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { BARESIP_MODULES, HAVE_BARESIP, waitFor, writeBaresipHome } from '../helpers/baresip.ts';

const HAVE_MWI = HAVE_BARESIP && existsSync(join(BARESIP_MODULES, 'mwi.so'));

test(
  'baresip subscribes to message-summary with digest; PUT /ari/mailboxes reaches it as Messages-Waiting: yes',
  { timeout: 90_000, skip: HAVE_MWI ? false : 'baresip or its mwi module is not installed (Debian package baresip)' },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-baresip-mwi-'));
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, '[sip-in]\nexten => 100,1,Hangup()\n');
    const server = await startTestServer({
      dialplan: { file: dialplanFile },
      config_objects: {
        res_pjsip: {
          endpoint: { alice: { context: 'sip-in', allow: 'ulaw', auth: 'alice-auth', aors: 'alice' } },
          auth: { 'alice-auth': { auth_type: 'userpass', username: 'alice', password: 'secret' } },
          aor: { alice: { max_contacts: 1, remove_existing: 'yes', mailboxes: 'alice@default' } },
        },
      },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    try {
      const sipPort = server.core.pjsip.port;
      const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, ['module_app mwi.so']);
      writeFileSync(join(home, 'accounts'), `<sip:alice@127.0.0.1:${sipPort};transport=udp>;auth_pass=secret;audio_codecs=PCMU;regint=60\n`);
      const child = spawn('baresip', ['-f', home, '-s'], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
      baresip = child;
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));

      await waitFor('the message-summary subscription', async () => (server.core.pjsip.stats().subscriptions === 1 ? true : undefined), 30_000);
      await waitFor('the first NOTIFY shown', async () => (/Messages-Waiting: no/.test(output) ? true : undefined), 15_000);
      assert.equal((await server.ari('/mailboxes/alice@default?oldMessages=2&newMessages=1', { method: 'PUT' })).status, 204);
      await waitFor('Messages-Waiting: yes shown', async () => (/Messages-Waiting: yes/.test(output) ? true : undefined), 15_000);
      assert.match(output, /Voice-Message: 1\/2 \(0\/0\)/);
    } catch (error) {
      process.stdout.write(`# baresip output (last 6000 characters):\n${output.slice(-6000).replace(/\r/g, '').replace(/^/gm, '# ')}\n`);
      throw error;
    } finally {
      if (baresip && baresip.exitCode === null) {
        const exited = new Promise((resolve) => baresip!.once('exit', resolve));
        baresip.kill('SIGTERM');
        const timer = setTimeout(() => baresip!.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
