// Asterisk's answer rules for a mixed wideband offer, against a real peer: an endpoint with
// allow=opus,g722,ulaw is called by a phone (SIPp) offering "0 9 101" (PCMU, then G.722, no Opus).
// Whatever the preference, Opus is not in the answer (an answer only keeps offered codecs); the
// order and count follow incoming_call_offer_pref as chan_pjsip's documentation states:
//   remote        the offer's order, every common codec:   0 9 101  → the call runs PCMU
//   remote_first  the offer's first common codec only:     0 101    → PCMU
//   local         allow='s order, every common codec:      9 0 101  → G.722
//   local_first   allow='s first common codec only:        9 101    → G.722
// and codec_prefs_incoming_offer (Asterisk 18+'s form) wins over it when both are set;
// preferred_codec_only=yes answers as local_first (res_pjsip sets that preference for it). The codec the
// channel runs is read with CHANNEL(audionativeformat); the answer from SIPp's message trace.
// Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, nextEvent, sipp, startSippServer, type SippServer } from './sipp-peer.ts';

const APP = 'codec-preference';
const ALLOW = 'opus,g722,ulaw';

/** Endpoint name → its options and the answer Asterisk gives to "0 9 101". */
const CASES = {
  remote: { options: { incoming_call_offer_pref: 'remote' }, formats: '0 9 101', codec: 'ulaw' },
  remotefirst: { options: { incoming_call_offer_pref: 'remote_first' }, formats: '0 101', codec: 'ulaw' },
  local: { options: { incoming_call_offer_pref: 'local' }, formats: '9 0 101', codec: 'g722' },
  localfirst: { options: { incoming_call_offer_pref: 'local_first' }, formats: '9 101', codec: 'g722' },
  // The Asterisk 18+ form set beside the old one: it decides.
  configured: { options: { incoming_call_offer_pref: 'remote', codec_prefs_incoming_offer: 'prefer: configured, operation: intersect, keep: all, transcode: allow' }, formats: '9 0 101', codec: 'g722' },
  // preferred_codec_only is local_first, whether incoming_call_offer_pref is left alone or set to local.
  preferredonly: { options: { preferred_codec_only: 'yes' }, formats: '9 101', codec: 'g722' },
  preferredlocal: { options: { preferred_codec_only: 'yes', incoming_call_offer_pref: 'local' }, formats: '9 101', codec: 'g722' },
} as const;

let peer: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  const endpoints = Object.fromEntries(Object.entries(CASES).map(([name, plan]) => [name, { context: 'pref-in', allow: ALLOW, ...plan.options }]));
  peer = await startSippServer('codec-preference', `[pref-in]\nexten => 100,1,Stasis(${APP})\n`, { endpoint: endpoints }, APP);
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

describe(`allow=${ALLOW} answering a phone's "0 9 101" (PCMU, G.722)`, { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  for (const [endpoint, plan] of Object.entries(CASES)) {
    const described = Object.entries(plan.options).map(([key, value]) => `${key}=${value}`).join(', ');
    test(`${described}: answered "${plan.formats}", the call runs ${plan.codec}`, { timeout: 60_000 }, async () => {
      const trace = join(peer.work, `${endpoint}.messages.log`);
      const call = sipp('call-pcmu-g722.xml', [peer.target(), '-s', '100', '-set', 'caller', endpoint, '-d', '1500', '-trace_msg', '-message_file', trace], { cwd: peer.work });
      const start = await nextEvent(peer.events, (event) => event.type === 'StasisStart' && event.channel?.name?.startsWith(`PJSIP/${endpoint}-`));
      const id = start.channel.id as string;
      assert.equal((await peer.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
      const format = (await (await peer.server.ari(`/channels/${id}/variable?variable=${encodeURIComponent('CHANNEL(audionativeformat)')}`)).json()) as { value: string };
      const run = await call.done;
      assert.equal(run.status, 0, run.output);
      assert.ok(existsSync(trace), 'SIPp traced its messages');
      // The 200 OK to the INVITE is the one with a body; the 200 to the BYE has none.
      const answer = /SIP\/2\.0 200 OK[\s\S]*?\r?\nm=audio \d+ RTP\/AVP ([0-9 ]+)\r?\n/.exec(readFileSync(trace, 'latin1'));
      assert.ok(answer, 'the 200 OK carried an SDP answer');
      assert.equal(answer[1].trim(), plan.formats, 'the answer\'s payload types');
      assert.equal(format.value, plan.codec, 'the codec the channel runs');
    });
  }
});
