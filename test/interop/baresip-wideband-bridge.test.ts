// A three-party conference of real softphones in one mixing bridge, each on its own codec: a baresip
// on G.722 (16 kHz), one on Opus (48 kHz) and one on PCMU only (8 kHz). An ARI application answers
// each call and adds it to the bridge, as a ConfBridge would. What each one hears is its sndfile dump.
//
// The high tones are chosen from the narrowest path they cross. The G.722 party's tone goes
// 16 kHz → the 48 kHz mix → the Opus party; the Opus party's tone goes the 48 kHz mix → 16 kHz
// (the resampler cuts at 88.75 % of 8 kHz, about 7.1 kHz) → G.722, whose sub-band filters roll off
// towards 8 kHz and which baresip feeds through its own 48 → 16 kHz resampler. 6.5 kHz (G.722
// party) and 6.8 kHz (Opus party) stay under all of those edges with room; 7 kHz would sit on the
// resampler's transition band and prove nothing about the band but its slope.
//
// Each wideband party says its high tone with a low marker 6 dB under it (1 kHz from the G.722
// party, 500 Hz from the Opus party), from a WAV file: the high tone's level against the marker's
// where it is heard is what the band cost it, whatever else the conference adds. The PCMU party hears
// both high tones band-limited: its 8 kHz channel cannot carry them, and a resampler without its
// low-pass would fold them to 8000 − f (1.5 and 1.2 kHz), which are measured against the markers it
// hears (proving it is in the conference). Skipped with a message when baresip, one of its modules
// or sox is missing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { meanSquare } from '../../src/media/energy.ts';
import { HAVE_BARESIP, nextOfType, type Json } from '../helpers/baresip.ts';
import { BaresipParty, HAVE_SOX, MISSING_PARTY_MODULES, toneFile } from '../helpers/baresip-party.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { peakAbove, tonePower } from '../helpers/tone-power.ts';

const G722_TONE_HZ = 6500;
const OPUS_TONE_HZ = 6800;
const G722_MARKER_HZ = 1000;
const OPUS_MARKER_HZ = 500;
const ULAW_TONE_HZ = 400;
/** Each wideband party's high tone is this many times its marker's power at the source (6 dB). */
const SOURCE_RATIO = 4;
const APP = 'conference';
const skip = !HAVE_BARESIP
  ? 'baresip is not installed (Debian package baresip)'
  : MISSING_PARTY_MODULES.length > 0
    ? `baresip modules missing: ${MISSING_PARTY_MODULES.join(', ')}`
    : !HAVE_SOX
      ? 'sox is not installed'
      : false;

/** How many dB the high tone lost against the marker that left the same phone 6 dB under it. */
function bandLoss(heard: { rate: number; samples: Int16Array }, tone: number, marker: number): number {
  const ratio = tonePower(heard.samples, tone, heard.rate) / Math.max(1e-9, tonePower(heard.samples, marker, heard.rate));
  return 10 * Math.log10(SOURCE_RATIO / Math.max(ratio, 1e-12));
}

/** Answers each call that enters the application and adds it to `bridgeId`, until `count` have. */
async function admit(server: TestServer, events: EventSocket, bridgeId: string, count: number): Promise<Map<string, string>> {
  const channelOf = new Map<string, string>();
  while (channelOf.size < count) {
    const started: Json = await nextOfType(events, 'StasisStart');
    const channel = started.channel as { id: string; name: string };
    const endpoint = /^PJSIP\/(.+)-[^-]+$/.exec(channel.name)?.[1] ?? channel.name;
    const answered = await server.ari(`/channels/${channel.id}/answer`, { method: 'POST' });
    assert.equal(answered.status, 204, await answered.text());
    const added = await server.ari(`/bridges/${bridgeId}/addChannel?channel=${channel.id}`, { method: 'POST' });
    assert.equal(added.status, 204, await added.text());
    channelOf.set(endpoint, channel.id);
  }
  return channelOf;
}

describe('baresip G.722, Opus and PCMU parties in one mixing bridge', { skip }, () => {
  test(
    `the G.722 party's ${G722_TONE_HZ / 1000} kHz reaches the Opus party and the Opus party's ${OPUS_TONE_HZ / 1000} kHz the G.722 party, mixed at 48 kHz; the PCMU party hears them band-limited, nothing folded`,
    { timeout: 150_000 },
    async () => {
      const work = mkdtempSync(join(tmpdir(), 'patchbay-wide-bridge-'));
      const source = (name: string, tones: ReadonlyArray<{ hz: number; volume: number }>): string => {
        const path = join(work, `${name}.wav`);
        toneFile(path, 30, tones);
        return path;
      };
      const g722Source = source('g722-party', [
        { hz: G722_TONE_HZ, volume: 0.4 },
        { hz: G722_MARKER_HZ, volume: 0.2 },
      ]);
      const opusSource = source('opus-party', [
        { hz: OPUS_TONE_HZ, volume: 0.4 },
        { hz: OPUS_MARKER_HZ, volume: 0.2 },
      ]);
      // Quiet, so it does not drown what the others are checked for.
      const ulawSource = source('pcmu-party', [{ hz: ULAW_TONE_HZ, volume: 0.05 }]);
      const dialplanFile = join(work, 'extensions.conf');
      writeFileSync(dialplanFile, `[sip-in]\nexten => 900,1,Stasis(${APP})\n same => n,Hangup()\n`);
      const server = await startTestServer({
        dialplan: { file: dialplanFile },
        config_objects: {
          res_pjsip: {
            endpoint: {
              wide: { context: 'sip-in', allow: 'g722' },
              full: { context: 'sip-in', allow: 'opus' },
              narrow: { context: 'sip-in', allow: 'ulaw' },
            },
          },
        },
      });
      const parties = [
        new BaresipParty({ user: 'wide', codec: 'G722/16000/1', source: `aufile,${g722Source}` }, join(work, 'wide')),
        new BaresipParty({ user: 'full', codec: 'opus/48000/2', source: `aufile,${opusSource}` }, join(work, 'full')),
        new BaresipParty({ user: 'narrow', codec: 'PCMU/8000/1', source: `aufile,${ulawSource}` }, join(work, 'narrow')),
      ];
      const [wide, full, narrow] = parties;
      try {
        const events = await server.events(`app=${APP}`);
        const bridge = (await (await server.ari('/bridges?type=mixing&name=conference', { method: 'POST' })).json()) as { id: string };
        const sipPort = server.core.pjsip.port;
        for (const party of parties) await party.start(sipPort);
        for (const party of parties) await party.dial(`sip:900@127.0.0.1:${sipPort}`);
        const channels = await admit(server, events, bridge.id, parties.length);

        const formats: Record<string, string> = {};
        for (const [endpoint, id] of channels) {
          const variable = (await (await server.ari(`/channels/${id}/variable?variable=${encodeURIComponent('CHANNEL(audionativeformat)')}`)).json()) as { value: string };
          formats[endpoint] = variable.value;
        }
        assert.deepEqual(formats, { wide: 'g722', full: 'opus', narrow: 'ulaw' }, 'each party runs its own codec');
        // The bridge mixes at its highest member rate: Opus's 48 kHz.
        assert.equal(server.core.bridges.get(bridge.id)?.rate, 48000);
        const members = ((await (await server.ari(`/bridges/${bridge.id}`)).json()) as { channels: string[] }).channels;
        assert.equal(members.length, 3);

        // Four seconds of conference; the last two of each dump are analysed.
        await new Promise((resolve) => setTimeout(resolve, 4000));
        assert.equal(server.core.bridges.get(bridge.id)?.rate, 48000, 'still mixing at 48 kHz');
        for (const party of parties) await party.hangup();
        await new Promise((resolve) => setTimeout(resolve, 500));

        const lastTwoSeconds = (party: BaresipParty): { rate: number; samples: Int16Array } => {
          const heard = party.heard();
          return { rate: heard.rate, samples: heard.samples.subarray(Math.max(0, heard.samples.length - 2 * heard.rate)) };
        };
        const report: string[] = [];

        // The Opus party hears the G.722 party's high tone at its frequency: wideband end to end.
        const atFull = lastTwoSeconds(full);
        assert.ok(atFull.rate >= 16000, `the Opus party decodes at ${atFull.rate} Hz`);
        const fullTotal = meanSquare(atFull.samples);
        assert.ok(fullTotal > 1e5, `the Opus party heard the conference (mean square ${fullTotal.toFixed(0)})`);
        const fullPeak = peakAbove(atFull.samples, atFull.rate, 4000);
        const fullShare = tonePower(atFull.samples, G722_TONE_HZ, atFull.rate) / fullTotal;
        const fullLoss = bandLoss(atFull, G722_TONE_HZ, G722_MARKER_HZ);
        report.push(`Opus party: strongest above 4 kHz at ${fullPeak.frequency} Hz, ${G722_TONE_HZ} Hz is ${(fullShare * 100).toFixed(1)} % of what it hears, ${fullLoss.toFixed(1)} dB under its level against the marker at the source`);
        assert.ok(Math.abs(fullPeak.frequency - G722_TONE_HZ) <= 25, `the Opus party's strongest tone above 4 kHz is at ${fullPeak.frequency} Hz`);
        assert.ok(fullShare > 0.3, `${G722_TONE_HZ} Hz is ${(fullShare * 100).toFixed(0)} % of what the Opus party hears`);
        assert.ok(fullLoss < 3, `${G722_TONE_HZ} Hz lost ${fullLoss.toFixed(1)} dB against the 1 kHz marker on its way to the Opus party`);

        // The G.722 party hears the Opus party's high tone.
        const atWide = lastTwoSeconds(wide);
        assert.equal(atWide.rate, 16000, 'the G.722 party decodes at 16 kHz');
        const wideTotal = meanSquare(atWide.samples);
        assert.ok(wideTotal > 1e5, `the G.722 party heard the conference (mean square ${wideTotal.toFixed(0)})`);
        const widePeak = peakAbove(atWide.samples, atWide.rate, 4000);
        const wideShare = tonePower(atWide.samples, OPUS_TONE_HZ, atWide.rate) / wideTotal;
        const wideLoss = bandLoss(atWide, OPUS_TONE_HZ, OPUS_MARKER_HZ);
        report.push(`G.722 party: strongest above 4 kHz at ${widePeak.frequency} Hz, ${OPUS_TONE_HZ} Hz is ${(wideShare * 100).toFixed(1)} % of what it hears, ${wideLoss.toFixed(1)} dB under its level against the marker at the source`);
        assert.ok(Math.abs(widePeak.frequency - OPUS_TONE_HZ) <= 25, `the G.722 party's strongest tone above 4 kHz is at ${widePeak.frequency} Hz`);
        assert.ok(wideShare > 0.3, `${OPUS_TONE_HZ} Hz is ${(wideShare * 100).toFixed(0)} % of what the G.722 party hears`);
        assert.ok(wideLoss < 3, `${OPUS_TONE_HZ} Hz lost ${wideLoss.toFixed(1)} dB against the 500 Hz marker on its way to the G.722 party`);

        // The PCMU party hears both markers, and neither high tone folded into its band.
        const atNarrow = lastTwoSeconds(narrow);
        assert.equal(atNarrow.rate, 8000, 'the PCMU party decodes at 8 kHz: nothing above 4 kHz can reach it');
        const narrowTotal = meanSquare(atNarrow.samples);
        for (const [tone, marker] of [
          [G722_TONE_HZ, G722_MARKER_HZ],
          [OPUS_TONE_HZ, OPUS_MARKER_HZ],
        ] as const) {
          const markerPower = tonePower(atNarrow.samples, marker, 8000);
          assert.ok(markerPower / narrowTotal > 0.25, `the ${marker} Hz marker is ${((markerPower / narrowTotal) * 100).toFixed(0)} % of what the PCMU party hears`);
          // Against the tone's own level: the marker is 6 dB under it at the source.
          const folded = tonePower(atNarrow.samples, 8000 - tone, 8000) / (markerPower * SOURCE_RATIO);
          const foldedDb = 10 * Math.log10(Math.max(folded, 1e-12));
          report.push(`PCMU party: ${tone} Hz folded to ${8000 - tone} Hz at ${foldedDb.toFixed(1)} dB of the tone (marker ${((markerPower / narrowTotal) * 100).toFixed(0)} % of what it hears)`);
          assert.ok(foldedDb < -40, `${tone} Hz folded to ${8000 - tone} Hz at ${foldedDb.toFixed(1)} dB of the tone`);
        }
        process.stdout.write(`${report.join('\n')}\n`);
        events.socket.close();
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${parties.map((party) => `${party.plan.user} said:\n${party.output.slice(-1500)}`).join('\n')}`);
      } finally {
        await Promise.all(parties.map((party) => party.stop()));
        await server.stop();
        rmSync(work, { recursive: true, force: true });
      }
    },
  );
});
