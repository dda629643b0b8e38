// The 18x a caller gets before the answer, as chan_pjsip 22 sends them, counted by a SIPp caller in
// its message trace: each Progress() is a 183 (pjsip sends a copy of its last provisional, so a
// second 183, and any 18x after the first 183, repeats the SDP); Ringing() once our SDP went out is a
// 183 heard in band, or a 180 with the global allow_sending_180_after_183. Dial() passes a SIPp
// callee's 183 and 180 on as app_dial does (chan_pjsip reads a 180 with SDP as progress): its
// progress without `r`, its ringing once, and with `r` only the ringing Dial() indicated itself;
// with `m` or `r(tone)` Dial()'s own 183 (its music or tone as early media) and never a 180.
// Each suite's server is its own: the option is global.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { explained, HAVE_SIPP, randomPort, sipp, startSippServer, tracedMessages, type SippRun, type SippServer } from './sipp-peer.ts';

const DIALPLAN = [
  '[phones]',
  'exten => 650,1,Progress()',
  ' same => n,Progress()',
  ' same => n,Ringing()',
  ' same => n,Answer()',
  ' same => n,Wait(30)',
  'exten => 651,1,Ringing()',
  ' same => n,Progress()',
  ' same => n,Ringing()',
  ' same => n,Answer()',
  ' same => n,Wait(30)',
  'exten => 652,1,Dial(PJSIP/bob,30)',
  ' same => n,Hangup()',
  'exten => 653,1,Dial(PJSIP/bob,30,r)',
  ' same => n,Hangup()',
  'exten => 654,1,Dial(PJSIP/bob,30,m)',
  ' same => n,Hangup()',
  'exten => 655,1,Dial(PJSIP/bob,30,r(busy))',
  ' same => n,Hangup()',
  '',
].join('\n');

/** A server whose bob (a SIPp callee) listens on `bobPort`; alice calls in. */
function startServer(name: string, bobPort: number, global: Record<string, string>): Promise<SippServer> {
  return startSippServer(
    name,
    DIALPLAN,
    {
      endpoint: { alice: { context: 'phones', allow: 'ulaw' }, bob: { context: 'phones', allow: 'ulaw', aors: 'bob' } },
      aor: { bob: { contact: `sip:bob@127.0.0.1:${bobPort}` } },
      global: { global: global },
    },
    `${name}-app`,
  );
}

/** The 180s and 183s a traced caller run received, in order: status and whether it carried SDP (its body). */
function provisionals(run: SippRun): Array<{ status: number; sdp: string | undefined }> {
  return tracedMessages(run, /^SIP\/2\.0 18[03] /).map((message) => {
    const status = Number(message.slice(8, 11));
    const split = message.split(/\r?\n\r?\n/);
    const body = split.slice(1).join('\n\n').trim();
    return { status, sdp: /^content-type:\s*application\/sdp/im.test(split[0] ?? '') && body.startsWith('v=0') ? body : undefined };
  });
}

/** alice (SIPp, traced) calls `extension` of `setup`; with `bob`, bob answers as that SIPp callee scenario first. */
async function call(setup: SippServer, extension: string, bob?: { scenario: string; port: number }): Promise<Array<{ status: number; sdp: string | undefined }>> {
  const callee = bob ? sipp(bob.scenario, [], { cwd: setup.work, port: bob.port, timeoutMs: 90_000, trace: true }) : undefined;
  if (callee) await callee.listening;
  // -nr: no INVITE resent on a loaded machine, which the server would answer with its last 18x again (an 18x more to count).
  const caller = sipp('call-provisionals.xml', [setup.target(), '-s', extension, '-set', 'caller', 'alice', '-mp', String(2 * Math.floor(randomPort() / 2)), '-nr'], { cwd: setup.work, timeoutMs: 90_000, trace: true });
  const run = await (callee ? explained(callee, () => caller.done) : caller.done);
  assert.equal(run.status, 0, run.output + run.messages.slice(-3000));
  if (callee) {
    const done = await callee.done;
    assert.equal(done.status, 0, done.output);
  }
  return provisionals(run);
}

/** Asserts the statuses, that every 183 and the 180s after one carry the same SDP (an answer to the PCMU offer), and the first 180s none. */
function assertProvisionals(got: Array<{ status: number; sdp: string | undefined }>, statuses: number[]): void {
  assert.deepEqual(got.map(({ status }) => status), statuses, JSON.stringify(got));
  const first = got.findIndex(({ status }) => status === 183);
  got.forEach(({ status, sdp }, index) => {
    if (first < 0 || index < first) return assert.equal(sdp, undefined, `${status} #${index} carries no SDP before our 183`);
    assert.match(sdp ?? '', /\nm=audio \d+ RTP\/AVP 0/, `${status} #${index} carries our SDP`);
    assert.equal(sdp, got[first]!.sdp, `${status} #${index} repeats the first 183's SDP`);
  });
}

const skip = HAVE_SIPP ? false : 'sipp is not installed';

describe('18x before the answer (chan_pjsip, allow_sending_180_after_183=no, the default)', { skip }, () => {
  const bobPort = randomPort();
  let setup: SippServer;
  before(async () => {
    if (!skip) setup = await startServer('early-progress', bobPort, {});
  });
  after(async () => setup?.close());

  test('Progress(), Progress(), Ringing(): three 183s with the same SDP, no 180', { timeout: 120_000 }, async () => {
    assertProvisionals(await call(setup, '650'), [183, 183, 183]);
  });

  test('Ringing(), Progress(), Ringing(): a 180 without SDP, then two 183s with it', { timeout: 120_000 }, async () => {
    assertProvisionals(await call(setup, '651'), [180, 183, 183]);
  });

  test("Dial() without r, the callee's 183 with SDP then 180: the caller gets 183, then 183 again for the ringing", { timeout: 120_000 }, async () => {
    assertProvisionals(await call(setup, '652', { scenario: 'progress-ring-answer.xml', port: bobPort }), [183, 183]);
  });

  test("Dial() without r, the callee's 180 with SDP (its early media): the caller gets a 183 with SDP, no 180", { timeout: 120_000 }, async () => {
    const got = await call(setup, '652', { scenario: 'ring-sdp-answer.xml', port: bobPort });
    // One 183 a 180 with SDP; a loaded SIPp answering our INVITE late has it resent, and its 180
    // again is progress again (another 183): how many is not the point, that none is a 180 is.
    assert.ok(got.length >= 1, 'a 183');
    assertProvisionals(got, got.map(() => 183));
  });

  test("Dial() with r, the callee's 183 with SDP then 180: the caller gets Dial()'s own 180 only", { timeout: 120_000 }, async () => {
    assertProvisionals(await call(setup, '653', { scenario: 'progress-ring-answer.xml', port: bobPort }), [180]);
  });

  test("Dial() with m, the callee's 183 with SDP then 180: Dial()'s own 183 (the music as early media), the callee's progress again, never its ringing", { timeout: 120_000 }, async () => {
    assertProvisionals(await call(setup, '654', { scenario: 'progress-ring-answer.xml', port: bobPort }), [183, 183]);
  });

  test("Dial() with r(busy), the callee's 183 with SDP then 180: Dial()'s own 183 for the tone only", { timeout: 120_000 }, async () => {
    assertProvisionals(await call(setup, '655', { scenario: 'progress-ring-answer.xml', port: bobPort }), [183]);
  });
});

describe('18x before the answer with allow_sending_180_after_183=yes', { skip }, () => {
  const bobPort = randomPort();
  let setup: SippServer;
  before(async () => {
    if (!skip) setup = await startServer('early-progress-180', bobPort, { allow_sending_180_after_183: 'yes' });
  });
  after(async () => setup?.close());

  test('Progress(), Progress(), Ringing(): two 183s, then a 180 repeating their SDP', { timeout: 120_000 }, async () => {
    assertProvisionals(await call(setup, '650'), [183, 183, 180]);
  });

  test("Dial() without r, the callee's 183 with SDP then 180: the caller gets 183, then 180", { timeout: 120_000 }, async () => {
    assertProvisionals(await call(setup, '652', { scenario: 'progress-ring-answer.xml', port: bobPort }), [183, 180]);
  });
});
