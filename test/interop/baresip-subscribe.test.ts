// Subscriptions from a real softphone, baresip 1.0:
// - its mwi module (RFC 3842): after it registers with digest, it SUBSCRIBEs to its own AOR for
//   message-summary (authenticated like an INVITE); the AOR has mailboxes=, so the first NOTIFY
//   says no messages, and PUT /ari/mailboxes makes the next one say Messages-Waiting: yes with
//   the counts, which baresip prints;
// - its presence module (PIDF): a contact `;presence=p2p` at extension 100, whose hint is an
//   ARI-controlled device, is shown Online while the device is idle, Offline once ARI sets it
//   UNAVAILABLE, and Online again when it is back.
// Skipped with a message when baresip (or the module) is not installed.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { aliceAccount, aliceWithDigest, BARESIP_MODULES, ctrl, HAVE_BARESIP, showBaresipOutput, spawnBaresip, stopBaresip, waitFor, writeBaresipHome } from '../helpers/baresip.ts';

const HAVE_MWI = HAVE_BARESIP && existsSync(join(BARESIP_MODULES, 'mwi.so'));
const HAVE_PRESENCE = HAVE_BARESIP && existsSync(join(BARESIP_MODULES, 'presence.so'));

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
          ...aliceWithDigest({ mailboxes: 'alice@default' }),
        },
      },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    try {
      const sipPort = server.core.pjsip.port;
      const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, ['module_app mwi.so']);
      writeFileSync(join(home, 'accounts'), aliceAccount(sipPort));
      baresip = spawnBaresip(home, work, (text) => (output += text));

      await waitFor('the message-summary subscription', async () => (server.core.pjsip.stats().subscriptions === 1 ? true : undefined), 30_000);
      await waitFor('the first NOTIFY shown', async () => (/Messages-Waiting: no/.test(output) ? true : undefined), 15_000);
      assert.equal((await server.ari('/mailboxes/alice@default?oldMessages=2&newMessages=1', { method: 'PUT' })).status, 204);
      await waitFor('Messages-Waiting: yes shown', async () => (/Messages-Waiting: yes/.test(output) ? true : undefined), 15_000);
      assert.match(output, /Voice-Message: 1\/2 \(0\/0\)/);
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    } finally {
      await stopBaresip(baresip);
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
);

test(
  'baresip subscribes to presence of a hinted extension: Online while idle, Offline when the device is UNAVAILABLE, Online again',
  { timeout: 90_000, skip: HAVE_PRESENCE ? false : 'baresip or its presence module is not installed (Debian package baresip)' },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-baresip-presence-'));
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, '[sip-in]\nexten => 100,hint,Stasis:desk100\nexten => 100,1,Hangup()\n');
    const server = await startTestServer({
      dialplan: { file: dialplanFile },
      config_objects: {
        res_pjsip: {
          ...aliceWithDigest(),
        },
      },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    try {
      const sipPort = server.core.pjsip.port;
      const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, ['module_app contact.so', 'module_app presence.so']);
      writeFileSync(join(home, 'accounts'), aliceAccount(sipPort));
      writeFileSync(join(home, 'contacts'), `"Desk 100" <sip:100@127.0.0.1:${sipPort}>;presence=p2p\n`);
      baresip = spawnBaresip(home, work, (text) => (output += text));

      // What baresip shows of the contact: its `contacts` command, colours stripped.
      const shown = async (wanted: string) => {
        const answer = await ctrl(ctrlPort, 'contacts', '').catch(() => undefined);
        // eslint-disable-next-line no-control-regex
        const text = String(answer?.data ?? '').replace(/\u001b\[[0-9;]*m/g, '');
        return new RegExp(`\\b${wanted}\\s+Desk 100`).test(text) ? true : undefined;
      };
      await waitFor('the presence subscription', async () => (server.core.pjsip.stats().subscriptions === 1 ? true : undefined), 30_000);
      await waitFor('Online while idle', () => shown('Online'));
      assert.equal((await server.ari('/deviceStates/Stasis:desk100?deviceState=UNAVAILABLE', { method: 'PUT' })).status, 204);
      await waitFor('Offline while unavailable', () => shown('Offline'));
      assert.equal((await server.ari('/deviceStates/Stasis:desk100?deviceState=NOT_INUSE', { method: 'PUT' })).status, 204);
      await waitFor('Online again', () => shown('Online'));
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    } finally {
      await stopBaresip(baresip);
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
