// The CDR engine alone, fed hand-made core events with a hand-driven clock: the cdr.conf options
// (unanswered, congestion, initiatedseconds, channeldefaultenabled), forks, party B hang-ups and
// what the dialplan verbs do, each as Asterisk 22's cdr.c does it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CdrEngine, type CdrEngineOptions } from '../../../src/core/cdr/cdr-engine.ts';
import type { CallDetailRecord } from '../../../src/core/cdr/record.ts';
import type { Model } from '../../../src/spec/index.ts';
import type { CoreEvent } from '../../../src/spec/events.ts';

interface Chan {
  id: string;
  name: string;
  state: Model<'Channel'>['state'];
  number: string;
  context: string;
  exten: string;
  priority: number;
  app: string;
  data: string;
  created: string;
}

function snapshot(c: Chan): Model<'Channel'> {
  return {
    id: c.id,
    name: c.name,
    state: c.state,
    protocol_id: '',
    caller: { name: '', number: c.number },
    connected: { name: '', number: '' },
    accountcode: '',
    dialplan: { context: c.context, exten: c.exten, priority: c.priority, app_name: c.app, app_data: c.data },
    creationtime: c.created,
    language: 'en',
  };
}

function harness(options: Partial<CdrEngineOptions> = {}) {
  let now = 1_000_000;
  const posted: CallDetailRecord[] = [];
  const engine = new CdrEngine({ unanswered: false, congestion: false, initiatedSeconds: false, channelDefaultEnabled: true, post: (r) => posted.push(r), now: () => now, ...options });
  const ts = '2026-11-27T00:00:00.000+0000';
  const send = (event: Record<string, unknown>): void => engine.handle({ timestamp: ts, ...event } as CoreEvent);
  const chan = (id: string, name: string, number = ''): Chan => {
    const c: Chan = { id, name, state: 'Ring', number, context: 'default', exten: 's', priority: 1, app: '', data: '', created: new Date(now).toISOString() };
    send({ type: 'ChannelCreated', channel: snapshot(c) });
    return c;
  };
  const step = (c: Chan, app: string, data = '', exten = c.exten): void => {
    c.priority += 1;
    c.app = app;
    c.data = data;
    c.exten = exten;
    send({ type: 'ChannelDialplan', channel: snapshot(c), dialplan_app: app, dialplan_app_data: data });
  };
  const answer = (c: Chan): void => {
    c.state = 'Up';
    send({ type: 'ChannelStateChange', channel: snapshot(c) });
  };
  const dial = (caller: Chan | undefined, peer: Chan, status: string): void => send({ type: 'Dial', peer: snapshot(peer), ...(caller ? { caller: snapshot(caller) } : {}), dialstring: 'x', dialstatus: status });
  const destroy = (c: Chan, cause = 16): void => send({ type: 'ChannelDestroyed', channel: snapshot(c), cause, cause_txt: '' });
  const bridgeEvent = (type: string, c: Chan, members: string[]): void =>
    send({ type, channel: snapshot(c), bridge: { id: 'b1', technology: 'simple_bridge', bridge_type: 'mixing', bridge_class: 'stasis', creator: '', name: '', channels: members, creationtime: ts, video_mode: 'none' } });
  return { engine, posted, chan, step, answer, dial, destroy, bridgeEvent, tick: (ms: number) => (now += ms) };
}

describe('CdrEngine', () => {
  test('an unanswered channel alone posts nothing (unanswered=no), and posts NO ANSWER with unanswered=yes', () => {
    for (const unanswered of [false, true]) {
      const h = harness({ unanswered });
      const a = h.chan('a', 'PJSIP/a-1', '100');
      h.step(a, 'Playback', 'hello', '200');
      h.tick(3000);
      h.destroy(a, 16);
      assert.equal(h.posted.length, unanswered ? 1 : 0);
      if (unanswered) assert.deepEqual([h.posted[0]!.disposition, h.posted[0]!.dst, h.posted[0]!.duration, h.posted[0]!.billsec], ['NO ANSWER', '200', 3, 0]);
    }
  });

  test('a dialed busy peer: the caller\'s record is BUSY and names it; the dialed one posts nothing', () => {
    const h = harness();
    const a = h.chan('a', 'PJSIP/a-1', '100');
    h.step(a, 'Dial', 'PJSIP/b', '200');
    const b = h.chan('b', 'PJSIP/b-2');
    h.dial(a, b, '');
    h.tick(500);
    h.dial(a, b, 'BUSY');
    h.destroy(b, 17);
    h.step(a, 'Hangup', '', '200');
    h.destroy(a, 16);
    assert.equal(h.posted.length, 1);
    const r = h.posted[0]!;
    assert.deepEqual([r.channel, r.dstchannel, r.disposition, r.lastapp, r.src, r.dst, r.answer], ['PJSIP/a-1', 'PJSIP/b-2', 'BUSY', 'Dial', '100', '200', 0]);
  });

  test('congestion is FAILED, or CONGESTION with congestion=yes', () => {
    for (const congestion of [false, true]) {
      const h = harness({ congestion });
      const a = h.chan('a', 'PJSIP/a-1');
      h.step(a, 'Dial', 'PJSIP/b');
      const b = h.chan('b', 'PJSIP/b-2');
      h.dial(a, b, '');
      h.dial(a, b, 'CONGESTION');
      h.destroy(b, 34);
      h.destroy(a, 16);
      assert.equal(h.posted[0]!.disposition, congestion ? 'CONGESTION' : 'FAILED');
    }
  });

  test('an answered dial ends when party B hangs up; billsec counts from the answer; initiatedseconds rounds up from .5', () => {
    for (const initiatedSeconds of [false, true]) {
      const h = harness({ initiatedSeconds });
      const a = h.chan('a', 'PJSIP/a-1');
      h.step(a, 'Dial', 'PJSIP/b');
      const b = h.chan('b', 'PJSIP/b-2');
      h.dial(a, b, '');
      h.tick(2000);
      h.answer(b);
      h.dial(a, b, 'ANSWER');
      h.answer(a);
      h.tick(4600);
      h.destroy(b, 16);
      h.tick(5000);
      h.destroy(a, 16);
      const r = h.posted[0]!;
      assert.deepEqual([r.disposition, r.duration, r.billsec], ['ANSWERED', 6, initiatedSeconds ? 5 : 4]);
    }
  });

  test('a channel that goes on after its dial failed forks a new record (posted when answered)', () => {
    const h = harness();
    const a = h.chan('a', 'PJSIP/a-1');
    h.step(a, 'Dial', 'PJSIP/b', '200');
    const b = h.chan('b', 'PJSIP/b-2');
    h.dial(a, b, '');
    h.dial(a, b, 'NOANSWER');
    h.destroy(b, 19);
    h.step(a, 'Answer', '', '200');
    h.answer(a);
    h.step(a, 'Playback', 'sorry', '200');
    h.tick(2000);
    h.destroy(a, 16);
    assert.deepEqual(h.posted.map((r) => [r.disposition, r.dstchannel, r.lastapp, r.sequence]), [
      ['NO ANSWER', 'PJSIP/b-2', 'Dial', 0],
      ['ANSWERED', '', 'Playback', 2],
    ]);
  });

  test('channeldefaultenabled=no posts nothing until CDR_PROP(disable)=0; NoCDR stops posting', () => {
    const h = harness({ channelDefaultEnabled: false });
    const a = h.chan('a', 'PJSIP/a-1');
    h.answer(a);
    h.destroy(a);
    const c = h.chan('c', 'PJSIP/c-1');
    h.answer(c);
    assert.equal(h.engine.setDisabled('c', false), true);
    h.destroy(c);
    assert.deepEqual(h.posted.map((r) => r.channel), ['PJSIP/c-1']);
    const d = harness();
    const x = d.chan('x', 'PJSIP/x-1');
    d.answer(x);
    d.engine.setDisabled('x', true);
    d.destroy(x);
    assert.equal(d.posted.length, 0);
  });

  test('bridged by an application: the older channel is party A; the record ends when one leaves', () => {
    const h = harness();
    const a = h.chan('a', 'PJSIP/a-1');
    h.answer(a);
    h.tick(10);
    const b = h.chan('b', 'PJSIP/b-2');
    h.answer(b);
    h.bridgeEvent('ChannelEnteredBridge', a, ['a']);
    h.bridgeEvent('ChannelEnteredBridge', b, ['a', 'b']);
    h.tick(3000);
    h.bridgeEvent('ChannelLeftBridge', b, ['a']);
    h.tick(1000);
    h.destroy(b);
    h.destroy(a);
    const paired = h.posted.find((r) => r.dstchannel !== '')!;
    assert.deepEqual([paired.channel, paired.dstchannel, paired.billsec], ['PJSIP/a-1', 'PJSIP/b-2', 3]);
  });

  test('ResetCDR restarts the times; without v the variables go', () => {
    const h = harness();
    const a = h.chan('a', 'PJSIP/a-1');
    h.answer(a);
    h.engine.current('a')!.variables.set('x', '1');
    h.tick(5000);
    h.engine.reset('a', false);
    h.tick(1000);
    h.destroy(a);
    assert.deepEqual([h.posted[0]!.duration, h.posted[0]!.billsec, h.posted[0]!.variables], [1, 1, {}]);
  });

  test('events about unknown channels are ignored', () => {
    const h = harness();
    h.destroy({ id: 'nope', name: 'X/1', state: 'Up', number: '', context: 'c', exten: 's', priority: 1, app: '', data: '', created: '' });
    h.dial(undefined, { id: 'nope', name: 'X/1', state: 'Up', number: '', context: 'c', exten: 's', priority: 1, app: '', data: '', created: '' }, 'ANSWER');
    assert.equal(h.posted.length, 0);
    assert.equal(h.engine.activeChannels, 0);
  });
});
