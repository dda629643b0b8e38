// The SIP technology against a real softphone, baresip 1.0 (Debian package baresip, installed by
// .ci/run): it registers with digest (MD5) so PJSIP/alice goes online, then dials 100, which enters
// a Stasis application that answers, plays a beep and hangs up; its contact is qualified (OPTIONS)
// and reported Reachable. baresip runs headless: a 440 Hz tone
// from the ausine module as its microphone, no audio player, commands over its ctrl_tcp socket.
// Skipped with a message when baresip is not installed.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestServer, type EventSocket } from '../helpers/server.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';

import { aliceAccount, aliceWithDigest, ctrl, HAVE_BARESIP, type Json, nextOfType, showBaresipOutput, spawnBaresip, stopBaresip, waitFor, writeBaresipHome } from '../helpers/baresip.ts';

test(
  'baresip registers with digest, calls 100 into Stasis, the app answers, plays a beep and hangs up',
  { timeout: 60_000, skip: HAVE_BARESIP ? false : 'baresip is not installed (Debian package baresip)' },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-baresip-'));
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, '[sip-in]\nexten => 100,1,Stasis(baresip-app)\n');
    const server = await startTestServer({
      dialplan: { file: dialplanFile },
      config_objects: {
        res_pjsip: {
          // Qualified every second: baresip answers the OPTIONS.
          ...aliceWithDigest({ qualify_frequency: 1 }),
        },
      },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    let events: EventSocket | undefined;
    try {
      const sipPort = server.core.pjsip.port;
      const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort });
      writeFileSync(join(home, 'accounts'), aliceAccount(sipPort));

      events = await server.events('app=baresip-app');
      assert.equal((await server.ari('/applications/baresip-app/subscription?eventSource=endpoint:PJSIP/alice', { method: 'POST' })).status, 200);
      baresip = spawnBaresip(home, work, (text) => (output += text));

      // Registration with digest: the endpoint goes online.
      await waitFor('PJSIP/alice online', async () => {
        const endpoint = (await (await server.ari('/endpoints/PJSIP/alice')).json()) as Json;
        return endpoint.state === 'online' ? endpoint : undefined;
      });

      // Qualify: the registered contact is Unknown, then Reachable once baresip answers an OPTIONS.
      const created = await nextOfType(events, 'ContactStatusChange');
      assert.equal(created.contact_info.contact_status, 'Unknown');
      const reachable = await nextOfType(events, 'ContactStatusChange');
      assert.equal(reachable.contact_info.contact_status, 'Reachable');
      assert.ok(Number(reachable.contact_info.roundtrip_usec) > 0, JSON.stringify(reachable.contact_info));

      const dialed = await waitFor('ctrl_tcp', () => ctrl(ctrlPort, 'dial', `sip:100@127.0.0.1:${sipPort}`).catch(() => undefined));
      assert.equal(dialed.ok, true, JSON.stringify(dialed));

      const start = await nextOfType(events, 'StasisStart');
      const channel = start.channel as Json;
      assert.match(channel.name, /^PJSIP\/alice-/);
      assert.equal(channel.dialplan.exten, '100');

      const answer = await server.ari(`/channels/${channel.id}/answer`, { method: 'POST' });
      assert.equal(answer.status, 204);
      const play = await server.ari(`/channels/${channel.id}/play?media=sound:beep`, { method: 'POST' });
      assert.equal(play.status, 201);
      const playback = (await play.json()) as Json;
      const finished = await waitFor('PlaybackFinished', async () => {
        const message = await nextOfType(events!, 'PlaybackFinished');
        return message.playback.id === playback.id ? message : undefined;
      });
      assert.equal(finished.playback.state, 'complete');

      const hangup = await server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
      assert.equal(hangup.status, 204);
      await nextOfType(events, 'ChannelDestroyed', channel.id);
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    } finally {
      await stopBaresip(baresip);
      await events?.close();
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
