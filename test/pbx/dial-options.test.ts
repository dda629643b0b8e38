// Dial()'s options beyond b, g, i, r, end to end on Local channels: what the caller hears while
// the callee rings (m: music, r(tone): a tone of its zone, each with progress instead of ringing),
// S(x) ending the answered call, D's digits on each side before the bridge, Q and c's causes for
// the callees, and the options Patchbay does not act on named in the log, at load and at run.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallDetailRecord } from '../../src/core/cdr/record.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { Indication } from '../../src/core/channels/technology.ts';
import type { Frame } from '../../src/media/frame.ts';
import { measure } from '../ari/bridges-helpers.ts';
import type { EventSocket } from '../helpers/server.ts';
import { assertNoChannels, channelName, channelOf, collectUntil, originate, untilDestroyed, varsets, type AriEvent, type PbxServer, withPbxEvents } from './pbx-helpers.ts';

const DIALPLAN = `
[callee-sub]
exten => s,1,Set(GOSUB_RESULT=\${ARG1})
 same => n,Return(ret-\${ARG2})

[callee-goto]
exten => s,1,Set(GOSUB_RESULT=GOTO:opts^landed^1)
 same => n,Return()

[opts]
exten => held,1,Ringing()
 same => n,Wait(60)

exten => echo,1,Answer()
 same => n,Echo()

exten => quiet,1,Answer()
 same => n,Wait(60)

exten => moh,1,Dial(Local/held@opts,,m)
exten => tone,1,Dial(Local/held@opts,,r(busy))
exten => notone,1,Dial(Local/held@opts,,r(nosuchtone))

exten => stop,1,Dial(Local/echo@opts,,gS(1))
 same => n,Set(RESULT=\${DIALSTATUS}:\${ANSWEREDTIME}:\${DIALEDTIME})
 same => n,Hangup()
exten => stop0,1,Dial(Local/echo@opts,,S(0))
 same => n,Set(RESULT=not reached)

exten => limit,1,Set(LIMIT_WARNING_FILE=beep)
 same => n,Dial(Local/quiet@opts,,gL(3000:2000))
 same => n,Set(RESULT=\${DIALSTATUS}:\${ANSWEREDTIME})
 same => n,Hangup()
exten => limit0,1,Dial(Local/echo@opts,,L(0))
 same => n,Set(RESULT=not reached)

exten => short,1,Answer()
 same => n,Hangup()
exten => cdrreset,1,Answer()
 same => n,Wait(1.1)
 same => n,Dial(Local/short@opts,,C)
exten => cdrkept,1,Answer()
 same => n,Wait(1.1)
 same => n,Dial(Local/short@opts)

exten => digits,1,Dial(Local/quiet@opts,,D(12:34))

exten => losers,1,Dial(Local/held@opts&Local/quiet@opts,,Q(NO_ANSWER))
exten => cancel,1,Dial(Local/held@opts,,c)

exten => announce,1,Dial(Local/held@opts,,A(beep:beep))

exten => ubusy,1,Dial(Local/quiet@opts,,U(callee-sub^BUSY^b))
 same => n,Set(RESULT=\${DIALSTATUS}:\${GOSUB_RETVAL})
 same => n,Hangup()
exten => ucontinue,1,Dial(Local/quiet@opts,,U(callee-sub^CONTINUE^c))
 same => n,Set(RESULT=\${DIALSTATUS}:\${GOSUB_RETVAL})
 same => n,Hangup()
exten => uabort,1,Dial(Local/quiet@opts,,U(callee-sub^ABORT^a))
 same => n,Set(RESULT=not reached)
exten => ugoto,1,Dial(Local/quiet@opts,,U(callee-goto))
 same => n,Set(RESULT=not reached)
exten => landed,1,Set(RESULT=landed:\${DIALSTATUS})
 same => n,Hangup()
exten => ubridge,1,Dial(Local/quiet@opts,,U(callee-sub^^r))

exten => unsupported,1,Dial(Local/echo@opts,,xXgy)
 same => n,Hangup()
exten => dynamic,1,Set(OPTS=Xk)
 same => n,Dial(Local/echo@opts,,\${OPTS})
`;

let pbx: PbxServer;
let events: EventSocket;
withPbxEvents(DIALPLAN, (started) => ({ pbx, events } = started));

const isDialTo = (caller: Channel) => (event: AriEvent) =>
  event.type === 'Dial' && event.caller !== undefined && String((event.caller as Record<string, unknown>).name) === caller.name && event.dialstatus === '';

/** The callee channel (the `;1` half Dial made) once its Dial event arrived. */
async function calleeOf(caller: Channel, seen?: AriEvent[]): Promise<Channel> {
  const collected = await collectUntil(events, isDialTo(caller));
  seen?.push(...collected);
  const event = collected.at(-1)!;
  const callee = pbx.server.core.channels.get(String((event.peer as Record<string, unknown>).name));
  assert.ok(callee, 'the callee exists');
  return callee;
}

/**
 * The callee's name from its Dial event, then every event until the caller's pair and the callee's
 * pair are destroyed (by name: a callee that ends by itself may be gone before its event is read).
 */
async function untilCallEnds(caller: ReturnType<typeof originate>, timeoutMs = 20_000): Promise<{ seen: AriEvent[]; calleeName: string }> {
  const seen = await collectUntil(events, isDialTo(caller.two));
  const calleeName = String((seen.at(-1)!.peer as Record<string, unknown>).name);
  const waiting = new Set([caller.one.name, caller.two.name, calleeName, calleeName.replace(/;1$/, ';2')]);
  seen.push(
    ...(await collectUntil(
      events,
      (event) => {
        if (event.type === 'ChannelDestroyed') waiting.delete(channelName(event));
        return waiting.size === 0;
      },
      timeoutMs,
    )),
  );
  return { seen, calleeName };
}

/** What reaches a channel: its frames' samples (copied) and its far end's indications. */
function listenTo(channel: Channel): { samples(): Int16Array; frames(): number; indications: Indication[]; untilFrames(count: number): Promise<void>; clear(): void; stop(): void } {
  let chunks: Int16Array[] = [];
  let waiter: { count: number; resolve: () => void } | undefined;
  const indications: Indication[] = [];
  const onFrame = (frame: Frame): void => {
    chunks.push(Int16Array.from(frame.samples));
    if (waiter && chunks.length >= waiter.count) {
      waiter.resolve();
      waiter = undefined;
    }
  };
  const onIndication = (indication: Indication): void => void indications.push(indication);
  channel.addFrameListener(onFrame);
  channel.on('remote-indication', onIndication);
  return {
    samples: () => {
      const out = new Int16Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
      let at = 0;
      for (const chunk of chunks) {
        out.set(chunk, at);
        at += chunk.length;
      }
      return out;
    },
    frames: () => chunks.length,
    indications,
    untilFrames: (count) =>
      chunks.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`only ${chunks.length} of ${count} frames in 15 s`)), 15_000);
            waiter = {
              count,
              resolve: () => {
                clearTimeout(timer);
                resolve();
              },
            };
          }),
    clear: () => {
      chunks = [];
    },
    stop: () => {
      channel.removeFrameListener(onFrame);
      channel.off('remote-indication', onIndication);
    },
  };
}

const destroyedCause = (seen: readonly AriEvent[], channel: Channel): unknown => seen.find((event) => event.type === 'ChannelDestroyed' && channelOf(event).id === channel.id)?.cause;

describe('Dial options', () => {
  test('m: the caller hears music on hold and is told progress, not the callee’s ringing; the music ends at the answer', async () => {
    const call = originate(pbx.server, 'Local/moh@opts');
    const heard = listenTo(call.one);
    const callee = await calleeOf(call.two);
    await heard.untilFrames(25);
    const music = heard.samples();
    assert.ok(measure(music, 440).rms > 100, `music while the callee rings (rms ${measure(music, 440).rms.toFixed(0)})`);
    assert.ok(heard.indications.includes('progress'), `progress indicated (${heard.indications.join(',')})`);
    // The callee rang (Ringing()); that reaches the Dial's watchers, not the caller.
    await collectUntil(events, (event) => event.type === 'ChannelStateChange' && channelName(event) === callee.name && channelOf(event).state === 'Ringing');
    assert.ok(!heard.indications.includes('ringing'), `no ringing passed on (${heard.indications.join(',')})`);

    callee.peer!.answer();
    assert.equal(await call.status, 'ANSWER');
    heard.clear();
    // The callee's Wait() sends nothing: whatever the caller gets now is not music.
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.ok(measure(heard.samples(), 440).rms < 1, 'no music once answered');
    heard.stop();
    call.one.hangup();
    await untilDestroyed(events, [call.one, call.two, callee, callee.peer!], 15_000);
    assertNoChannels(pbx.server);
  });

  test('r(tone): the caller hears that tone of its zone with progress; a tone the zone lacks rings it instead', async () => {
    const call = originate(pbx.server, 'Local/tone@opts');
    const heard = listenTo(call.one);
    const callee = await calleeOf(call.two);
    await heard.untilFrames(25);
    // The us zone's busy tone: 480+620 Hz.
    const tone = heard.samples();
    assert.ok(measure(tone, 480).amplitude > 500 && measure(tone, 620).amplitude > 500, `the busy tone (480 Hz ${measure(tone, 480).amplitude.toFixed(0)}, 620 Hz ${measure(tone, 620).amplitude.toFixed(0)})`);
    assert.deepEqual(heard.indications.filter((indication) => indication === 'ringing'), []);
    assert.ok(heard.indications.includes('progress'));
    heard.stop();
    call.one.hangup();
    await untilDestroyed(events, [call.one, call.two, callee, callee.peer!], 15_000);

    const other = originate(pbx.server, 'Local/notone@opts');
    const told = listenTo(other.one);
    // Rung at once, before the callee is dialed.
    const early: AriEvent[] = [];
    const otherCallee = await calleeOf(other.two, early);
    assert.ok(early.some((event) => event.type === 'ChannelStateChange' && channelName(event) === other.one.name && channelOf(event).state === 'Ringing'), 'the caller is rung');
    assert.ok(told.indications.includes('ringing'));
    assert.ok(pbx.server.logLines.some((line) => line.includes("unable to start playtone 'nosuchtone'")), 'the missing tone is named');
    told.stop();
    other.one.hangup();
    await untilDestroyed(events, [other.one, other.two, otherCallee, otherCallee.peer!], 15_000);
    assertNoChannels(pbx.server);
  });

  test('S(1): the callee is hung up a second after it answered; with g the caller goes on, ANSWEREDTIME ≥ 1', async () => {
    const call = originate(pbx.server, 'Local/stop@opts');
    const { seen, calleeName } = await untilCallEnds(call);
    const [result] = varsets(seen, call.two.name, 'RESULT');
    const [status, answered, dialed] = result!.split(':');
    assert.equal(status, 'ANSWER');
    assert.ok(Number(answered) >= 1 && Number(answered) <= 10, `ANSWEREDTIME ${answered}`);
    assert.ok(Number(dialed) >= Number(answered), `DIALEDTIME ${dialed}`);
    assert.equal(seen.find((event) => event.type === 'ChannelDestroyed' && channelName(event) === calleeName)?.cause, 16, 'the callee ends with normal clearing');

    const refused = originate(pbx.server, 'Local/stop0@opts');
    const ended = await untilDestroyed(events, [refused.one, refused.two], 15_000);
    assert.deepEqual(varsets(ended, refused.two.name, 'RESULT'), [], 'S(0): Dial refuses and the dialplan ends');
    assert.ok(pbx.server.logLines.some((line) => line.includes('Dial does not accept S(0)')));
    assertNoChannels(pbx.server);
  });

  test('L(3000:2000) with LIMIT_WARNING_FILE: the caller hears the warning during the call, which ends after 3 s; L(0) is refused', async () => {
    const call = originate(pbx.server, 'Local/limit@opts');
    const heard = listenTo(call.one);
    const { seen, calleeName } = await untilCallEnds(call);
    // The callee's Wait() sends nothing: the audio the caller got is the warning.
    assert.ok(measure(heard.samples(), 1000).rms > 100, `the warning was heard (rms ${measure(heard.samples(), 1000).rms.toFixed(0)})`);
    heard.stop();
    const [result] = varsets(seen, call.two.name, 'RESULT');
    const [status, answered] = result!.split(':');
    assert.equal(status, 'ANSWER');
    assert.ok(Number(answered) >= 3 && Number(answered) <= 15, `ANSWEREDTIME ${answered}`);
    assert.equal(seen.find((event) => event.type === 'ChannelDestroyed' && channelName(event) === calleeName)?.cause, 16);

    const refused = originate(pbx.server, 'Local/limit0@opts');
    const ended = await untilDestroyed(events, [refused.one, refused.two], 15_000);
    assert.deepEqual(varsets(ended, refused.two.name, 'RESULT'), []);
    assert.ok(pbx.server.logLines.some((line) => line.includes('Bridge does not accept L(0)')));
    assertNoChannels(pbx.server);
  });

  test('C: the caller\'s record starts again as Dial() starts (without C it counts the second before)', async () => {
    const posted: CallDetailRecord[] = [];
    pbx.server.core.records.onRecord((record) => posted.push(record));
    const recordOf = async (exten: string): Promise<CallDetailRecord> => {
      const call = originate(pbx.server, `Local/${exten}@opts`);
      await untilDestroyed(events, [call.one, call.two], 20_000);
      for (let tries = 0; tries < 300; tries++) {
        await pbx.server.core.records.flush();
        const found = posted.find((record) => record.channel === call.two.name);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no record of ${call.two.name}`);
    };
    const kept = await recordOf('cdrkept');
    assert.ok(kept.duration >= 1, `without C: duration ${kept.duration}`);
    const reset = await recordOf('cdrreset');
    assert.equal(reset.lastapp, 'Dial');
    assert.ok(reset.duration < kept.duration, `with C: duration ${reset.duration} (without: ${kept.duration})`);
    assertNoChannels(pbx.server);
  });

  test('D(12:34): 1 and 2 reach the callee, then 3 and 4 the caller, before the two are bridged', async () => {
    const call = originate(pbx.server, 'Local/digits@opts');
    const callee = await calleeOf(call.two);
    const isDigit = (event: AriEvent): boolean => event.type === 'ChannelDtmfReceived';
    const seen = await collectUntil(events, (event) => isDigit(event) && channelName(event) === call.one.name && event.digit === '4', 20_000);
    const digits = seen.filter(isDigit).map((event) => `${channelName(event) === call.one.name ? 'caller' : channelName(event) === callee.peer!.name ? 'callee' : channelName(event)}:${String(event.digit)}`);
    assert.deepEqual(digits, ['callee:1', 'callee:2', 'caller:3', 'caller:4']);
    const entered = await collectUntil(events, (event) => event.type === 'ChannelEnteredBridge' && channelName(event) === call.two.name);
    assert.ok(entered.length > 0);
    call.one.hangup();
    await untilDestroyed(events, [call.one, call.two, callee, callee.peer!], 15_000);
    assertNoChannels(pbx.server);
  });

  test('Q(NO_ANSWER): the callee that lost the race ends with cause 19, not 26', async () => {
    const call = originate(pbx.server, 'Local/losers@opts');
    const seen = await collectUntil(events, (event) => event.type === 'ChannelVarset' && channelName(event) === call.two.name && event.variable === 'DIALSTATUS' && event.value === 'ANSWER');
    const peers = seen.filter(isDialTo(call.two)).map((event) => pbx.server.core.channels.get(String((event.peer as Record<string, unknown>).name)) ?? String((event.peer as Record<string, unknown>).name));
    const heldName = seen.filter(isDialTo(call.two)).map((event) => String((event.peer as Record<string, unknown>).name)).find((name) => name.startsWith('Local/held@'))!;
    const rest = await collectUntil(events, (event) => event.type === 'ChannelDestroyed' && channelName(event) === heldName);
    assert.equal(rest.at(-1)!.cause, 19);
    assert.equal(peers.length, 2);
    call.one.hangup();
    const quiet = peers.find((peer): peer is Channel => typeof peer !== 'string' && peer.name.startsWith('Local/quiet@'))!;
    await untilDestroyed(events, [call.one, call.two, quiet, quiet.peer!], 15_000);
    assertNoChannels(pbx.server);
  });

  test('c: a callee cancelled because the caller hung up ends "answered elsewhere" (26)', async () => {
    const call = originate(pbx.server, 'Local/cancel@opts');
    const callee = await calleeOf(call.two);
    call.one.hangup();
    const seen = await untilDestroyed(events, [call.one, call.two, callee, callee.peer!], 15_000);
    assert.equal(destroyedCause(seen, callee), 26);
    assertNoChannels(pbx.server);
  });

  test('A(beep:beep): the callee and the caller each hear the file when the callee answers, then they are bridged', async () => {
    const call = originate(pbx.server, 'Local/announce@opts');
    const atCaller = listenTo(call.one);
    const callee = await calleeOf(call.two);
    const atCallee = listenTo(callee.peer!);
    // Answered once both are listened to, so neither misses the start of its announcement.
    callee.peer!.answer();
    const entered = await collectUntil(events, (event) => event.type === 'ChannelEnteredBridge' && channelName(event) === call.two.name, 20_000);
    assert.ok(entered.length > 0);
    // Before the bridge only the announcements send audio (the callee's Wait() sends none).
    assert.ok(measure(atCaller.samples(), 1000).rms > 100, `the caller heard the beep (rms ${measure(atCaller.samples(), 1000).rms.toFixed(0)})`);
    assert.ok(measure(atCallee.samples(), 1000).rms > 100, `the callee heard the beep (rms ${measure(atCallee.samples(), 1000).rms.toFixed(0)})`);
    atCaller.stop();
    atCallee.stop();
    call.one.hangup();
    await untilDestroyed(events, [call.one, call.two, callee, callee.peer!], 15_000);
    assertNoChannels(pbx.server);
  });

  test('U(): the callee subroutine’s GOSUB_RESULT — BUSY and CONTINUE go on, ABORT ends both, GOTO moves the caller, none bridges', async () => {
    // The callee may be gone before its Dial event is read: the four channels are waited for by name.
    const run = async (exten: string): Promise<{ seen: AriEvent[]; call: ReturnType<typeof originate> }> => {
      const call = originate(pbx.server, `Local/${exten}@opts`);
      return { seen: (await untilCallEnds(call)).seen, call };
    };
    const busy = await run('ubusy');
    assert.deepEqual(varsets(busy.seen, busy.call.two.name, 'RESULT'), ['BUSY:ret-b']);
    const going = await run('ucontinue');
    assert.deepEqual(varsets(going.seen, going.call.two.name, 'RESULT'), ['ANSWER:ret-c']);
    const abort = await run('uabort');
    assert.deepEqual(varsets(abort.seen, abort.call.two.name, 'RESULT'), []);
    assert.ok(!abort.seen.some((event) => event.type === 'ChannelEnteredBridge'), 'never bridged');
    const moved = await run('ugoto');
    assert.deepEqual(varsets(moved.seen, moved.call.two.name, 'RESULT'), ['landed:ANSWER']);

    const bridged = originate(pbx.server, 'Local/ubridge@opts');
    const callee = await calleeOf(bridged.two);
    await collectUntil(events, (event) => event.type === 'ChannelEnteredBridge' && channelName(event) === bridged.two.name, 20_000);
    assert.equal(bridged.two.getVariable('GOSUB_RETVAL'), 'ret-r');
    bridged.one.hangup();
    await untilDestroyed(events, [bridged.one, bridged.two, callee, callee.peer!], 15_000);
    assertNoChannels(pbx.server);
  });

  test('options Patchbay does not act on are named once per dialplan line, at load and at run', async () => {
    const warnings = (): string[] =>
      pbx.server.logLines
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((entry) => entry.level === 40)
        .map((entry) => entry.msg);
    const load = warnings().filter((line) => line.includes('Dial option'));
    assert.ok(load.some((line) => /extensions\.conf:\d+: Dial option 'x' is not supported: one-touch MixMonitor recording by DTMF \(automixmon\) is not supported$/.test(line)), load.join('\n'));
    assert.ok(load.some((line) => /: Dial option 'X' is not supported/.test(line)));
    assert.ok(load.some((line) => /: Dial option 'y' is unknown \(app_dial has no such option\) and is ignored$/.test(line)));
    assert.ok(!load.some((line) => /option '[gmrSDQcAULCBeFfGoIztThHwW]'/.test(line)), `implemented options are not named: ${load.join('\n')}`);

    for (let run = 0; run < 2; run++) {
      const call = originate(pbx.server, 'Local/dynamic@opts');
      const callee = await calleeOf(call.two);
      call.one.hangup();
      await untilDestroyed(events, [call.one, call.two, callee, callee.peer!], 15_000);
    }
    const atRun = warnings().filter((line) => line.startsWith("Dial option 'X'") || line.startsWith("Dial option 'k'"));
    assert.deepEqual(atRun, ["Dial option 'X' is not supported: one-touch MixMonitor recording by DTMF (automixmon) is not supported", "Dial option 'k' is not supported: call parking by DTMF (parkcall) is not supported"], 'once for the line, not once per call');
    assertNoChannels(pbx.server);
  });
});
