/**
 * Seeded mutation fuzzing of the SIP parser: a bounded number of mutations of real messages must
 * never throw (nor hit the parser's internal safety net), never hang, and whatever parses must
 * serialize and parse again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMessage, DEFAULT_LIMITS, StreamFramer } from '../../src/sip/parser.ts';
import { createResponse, type SipRequest } from '../../src/sip/message.ts';
import { ALL } from './samples.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

const rng = seededRandom;

const TOKENS = ['\r\n', '\r\n ', '\n', '\r', ' ', '\t', ':', ';', ',', '"', '\\', '<', '>', '@', '%', '%00', '%zz', '[', ']', '=', '?', '&', 'z9hG4bK', ';tag=', ';branch=', ';rport', ';received=', 'sip:', 'sips:', '99999999999999999999', '-1', '0', '65536', '\u0000', '\u00ff', '\u263a', 'SIP/2.0', 'Content-Length: 10', 'l: 99999', 'Via: SIP/2.0/UDP', 'v:', 'm: *', '\r\n\r\n'];

function mutate(input: Buffer, random: () => number): Buffer {
  let buf = input;
  const rounds = 1 + Math.floor(random() * 4);
  for (let r = 0; r < rounds; r++) {
    const pos = Math.floor(random() * (buf.length + 1));
    const op = Math.floor(random() * 8);
    switch (op) {
      case 0: {
        // flip a byte
        if (buf.length === 0) break;
        const copy = Buffer.from(buf);
        copy[Math.min(pos, copy.length - 1)] = Math.floor(random() * 256);
        buf = copy;
        break;
      }
      case 1: {
        const token = Buffer.from(TOKENS[Math.floor(random() * TOKENS.length)]);
        buf = Buffer.concat([buf.subarray(0, pos), token, buf.subarray(pos)]);
        break;
      }
      case 2: {
        const len = Math.floor(random() * 40);
        buf = Buffer.concat([buf.subarray(0, pos), buf.subarray(pos + len)]);
        break;
      }
      case 3: {
        // duplicate a slice, sometimes many times
        const len = Math.floor(random() * 80);
        const times = random() < 0.1 ? 200 : 1 + Math.floor(random() * 3);
        const slice = buf.subarray(pos, pos + len);
        buf = Buffer.concat([buf.subarray(0, pos), ...Array(times).fill(slice), buf.subarray(pos)]);
        break;
      }
      case 4:
        buf = buf.subarray(0, pos);
        break;
      case 5: {
        // swap two lines
        const lines = buf.toString('latin1').split('\r\n');
        const i = Math.floor(random() * lines.length);
        const j = Math.floor(random() * lines.length);
        [lines[i], lines[j]] = [lines[j], lines[i]];
        buf = Buffer.from(lines.join('\r\n'), 'latin1');
        break;
      }
      case 6: {
        // random bytes
        const len = 1 + Math.floor(random() * 16);
        const bytes = Buffer.alloc(len);
        for (let k = 0; k < len; k++) bytes[k] = Math.floor(random() * 256);
        buf = Buffer.concat([buf.subarray(0, pos), bytes, buf.subarray(pos)]);
        break;
      }
      default: {
        // change case of a region
        const s = buf.toString('latin1');
        const end = pos + Math.floor(random() * 30);
        buf = Buffer.from(s.slice(0, pos) + (random() < 0.5 ? s.slice(pos, end).toUpperCase() : s.slice(pos, end).toLowerCase()) + s.slice(end), 'latin1');
      }
    }
  }
  return buf;
}

describe('SIP parser fuzzing', () => {
  it('pathological messages near the size bound parse or fail fast', () => {
    const head = (extra: string): string =>
      `INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bKp\r\nFrom: <sip:x@y>;tag=1\r\nTo: <sip:a@b>\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\n${extra}\r\n\r\n`;
    const cases = [
      head('Via: SIP/2.0/UDP ' + 'h'.repeat(8000) + 'x y'),
      head('Via: ' + 'SIP/2.0/UDP h,'.repeat(500)),
      head(('Contact: ' + '<sip:a@b>,'.repeat(700) + '\r\n').repeat(7)),
      head('From2: ' + '"'.repeat(8000)),
      head('Contact: ' + '"\\'.repeat(3000)),
      head('Route: ' + '<'.repeat(8000)),
      head('Via: SIP/2.0/UDP h' + ';a=b'.repeat(1900)),
      head('X: ' + ' '.repeat(8000) + 'y'),
      head(('X: a\r\n' + ' b\r\n'.repeat(100)).repeat(10)),
      'INVITE ' + 'sip:' + '%41'.repeat(1300) + '@b SIP/2.0\r\n\r\n',
      '\r\n'.repeat(30000),
      'SIP/2.0 200 ' + 'x'.repeat(8000) + '\r\n\r\n',
    ];
    for (const text of cases) {
      const started = process.hrtime.bigint();
      const result = parseMessage(text);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (!result.ok) assert.ok(!result.reason.startsWith('parser error'), result.reason);
      // Catches a hang or a quadratic blow-up, not speed (a loaded 2-core machine pauses for GC).
      assert.ok(ms < 2000, `${ms} ms for ${JSON.stringify(text.slice(0, 60))}`);
    }
  });

  it('survives 6,000 seeded mutations of real messages in bounded time', () => {
    const random = rng(0x5eed);
    const seeds = ALL.map((m) => Buffer.from(m));
    const started = process.hrtime.bigint();
    let parsed = 0;
    let rejected = 0;
    let slowest = 0;
    for (let i = 0; i < 6000; i++) {
      const input = mutate(seeds[i % seeds.length], random);
      const t0 = process.hrtime.bigint();
      const result = parseMessage(input);
      const elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
      slowest = Math.max(slowest, elapsed);
      if (result.ok) {
        parsed++;
        const m = result.message;
        // typed accessors never throw on what parsed
        m.vias();
        m.contacts();
        m.from();
        m.to();
        m.cseq();
        m.routes('record-route');
        m.expires();
        m.maxForwards();
        const again = parseMessage(m.serialize());
        assert.ok(again.ok, `serialized form of mutation ${i} does not parse again: ${again.ok ? '' : again.reason}\n${m.serialize().toString('latin1')}`);
        if (m.isRequest()) createResponse(m as SipRequest, 400).serialize();
      } else {
        rejected++;
        assert.ok(!result.reason.startsWith('parser error'), `mutation ${i} hit the safety net: ${result.reason}\n${input.toString('latin1')}`);
        if (result.canRespond) {
          assert.ok(result.request);
          createResponse(result.request, result.status ?? 400).serialize();
        }
      }
    }
    const total = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(parsed > 100 && rejected > 100, `mutations exercise both paths (${parsed} parsed, ${rejected} rejected)`);
    assert.ok(slowest < 2000, `slowest message took ${slowest} ms`);
    assert.ok(total < 60_000, `fuzzing took ${total} ms`);
  });

  it('the stream framer survives mutated streams with bounded buffering', () => {
    const random = rng(42);
    const limits = { ...DEFAULT_LIMITS, maxMessageSize: 4096 };
    for (let i = 0; i < 500; i++) {
      const framer = new StreamFramer(limits);
      const stream = Buffer.concat(ALL.map((m) => mutate(Buffer.from(m), random)));
      for (let p = 0; p < stream.length; ) {
        const n = 1 + Math.floor(random() * 300);
        const r = framer.push(stream.subarray(p, p + n));
        p += n;
        for (const f of r.frames) {
          assert.ok(f.length <= limits.maxMessageSize);
          const parsed = parseMessage(f, limits, true);
          if (!parsed.ok) assert.ok(!parsed.reason.startsWith('parser error'), parsed.reason);
        }
        assert.ok(framer.pending <= limits.maxMessageSize + 300);
        if (r.error) break;
      }
    }
  });
});
