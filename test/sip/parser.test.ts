import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SipRequest, SipResponse, createResponse, headerKey, parseVia, type SipMessage } from '../../src/sip/message.ts';
import { DEFAULT_LIMITS, StreamFramer, parseMessage, type ParseResult } from '../../src/sip/parser.ts';
import { formatUri, parseNameAddr, parseUri, type SipUri } from '../../src/sip/uri.ts';
import { INVITE, MESSAGE, OK, OPTIONS, REGISTER, RINGING, SDP } from './samples.ts';

function ok(text: string | Buffer): SipMessage {
  const result = parseMessage(text);
  assert.ok(result.ok, `expected a message, got ${result.ok ? '' : result.reason}`);
  return result.message;
}

function bad(text: string | Buffer): Extract<ParseResult, { ok: false }> {
  const result = parseMessage(text);
  assert.equal(result.ok, false, 'expected a rejection');
  return result as Extract<ParseResult, { ok: false }>;
}

const sip = (text: string): SipUri => {
  const uri = parseUri(text);
  assert.ok(uri && uri.kind === 'sip', `not a SIP URI: ${text}`);
  return uri;
};

describe('SIP URIs', () => {
  it('parses user, password, host, port, params and headers', () => {
    const u = sip('sips:alice:secret@Example.COM:5061;transport=tcp;lr?subject=project%20x&priority=urgent');
    assert.equal(u.scheme, 'sips');
    assert.equal(u.user, 'alice');
    assert.equal(u.password, 'secret');
    assert.equal(u.host, 'example.com');
    assert.equal(u.port, 5061);
    assert.equal(u.params.get('transport'), 'tcp');
    assert.equal(u.params.get('lr'), null);
    assert.equal(u.headers.get('subject'), 'project%20x');
    assert.equal(u.headers.get('priority'), 'urgent');
  });
  it('reads IPv6 references and unescapes the user', () => {
    const u = sip('sip:%61lice%20b@[2001:db8::10]:5070;maddr=[2001:db8::1]');
    assert.equal(u.user, 'alice b');
    assert.equal(u.host, '2001:db8::10');
    assert.equal(u.port, 5070);
    assert.equal(formatUri(u), 'sip:alice%20b@[2001:db8::10]:5070;maddr=[2001:db8::1]');
  });
  it('rejects malformed URIs without throwing', () => {
    for (const text of ['', 'sip:', 'sip:@', 'sip:user@', 'sip:host:99999', 'sip:[::1', 'sip:ho st', 'sip:a@b;x;x', 'sip:a@b?x', '<sip:a@b>', 'sip:a@b:5060:1', 'sip:' + 'a'.repeat(5000)]) {
      assert.equal(parseUri(text)?.kind === 'sip' ? text : null, null, text);
    }
  });
  it('keeps other schemes opaque', () => {
    assert.deepEqual(parseUri('tel:+1-201-555-0123'), { kind: 'other', scheme: 'tel', opaque: '+1-201-555-0123' });
  });
  it('reads name-addr and addr-spec forms with their parameters', () => {
    const a = parseNameAddr('"Alice \\"A\\" Smith" <sip:alice@example.com;transport=udp>;tag=abc;expires=60')!;
    assert.equal(a.displayName, 'Alice "A" Smith');
    assert.equal((a.uri as SipUri).params.get('transport'), 'udp');
    assert.equal(a.params.get('tag'), 'abc');
    const b = parseNameAddr('sip:bob@example.com;tag=xyz')!;
    assert.equal(b.params.get('tag'), 'xyz');
    assert.equal((b.uri as SipUri).params.size, 0, 'addr-spec parameters belong to the header');
    const c = parseNameAddr('Bob  Jones <sip:bob@example.com>')!;
    assert.equal(c.displayName, 'Bob Jones');
    assert.equal(parseNameAddr('"unterminated <sip:a@b>'), null);
  });
});

describe('SIP message parser', () => {
  it('parses an INVITE with SDP and its typed headers', () => {
    const m = ok(INVITE) as SipRequest;
    assert.ok(m.isRequest());
    assert.equal(m.method, 'INVITE');
    assert.equal((m.uri as SipUri).user, 'bob');
    const via = m.topVia()!;
    assert.equal(via.transport, 'UDP');
    assert.equal(via.host, '192.0.2.10');
    assert.equal(via.port, 5060);
    assert.equal(via.branch, 'z9hG4bK776asdhds');
    assert.equal(via.rport, null);
    assert.equal(m.from()!.displayName, 'Alice Smith');
    assert.equal(m.fromTag(), '1928301774');
    assert.equal(m.toTag(), undefined);
    assert.deepEqual(m.cseq(), { seq: 314159, method: 'INVITE' });
    assert.equal(m.callId(), 'a84b4c76e66710@pc33.example.com');
    assert.equal(m.maxForwards(), 70);
    assert.equal(m.values('allow').length, 6);
    assert.equal(m.body.toString(), SDP);
    assert.equal(m.contentType(), 'application/sdp');
  });
  it('parses REGISTER with contact params and raw Authorization', () => {
    const m = ok(REGISTER);
    const contacts = m.contacts();
    assert.ok(Array.isArray(contacts));
    assert.equal(contacts[0].expires, 7200);
    assert.equal(contacts[0].q, 0.7);
    assert.equal(m.expires(), 7200);
    assert.match(m.authorization()[0], /^Digest username="bob"/);
  });
  it('parses responses', () => {
    const r = ok(RINGING) as SipResponse;
    assert.equal(r.status, 180);
    assert.equal(r.reason, 'Ringing');
    assert.equal(r.topVia()!.received, '198.51.100.7');
    assert.equal(r.topVia()!.rport, 5062);
    const o = ok(OK) as SipResponse;
    assert.equal(o.routes('record-route').length, 2);
    assert.equal(o.body.toString(), SDP);
    ok(OPTIONS);
  });
  it('expands compact header forms', () => {
    const m = ok(MESSAGE);
    assert.equal(m.callId(), 'asd88asd77a@1.2.3.4');
    assert.equal(m.get('Content-Type'), 'text/plain');
    assert.equal(m.body.toString(), 'Watson, come here.');
    assert.equal(m.get('x-account'), '1234');
    for (const [c, long] of [['i', 'call-id'], ['m', 'contact'], ['e', 'content-encoding'], ['l', 'content-length'], ['c', 'content-type'], ['f', 'from'], ['s', 'subject'], ['k', 'supported'], ['t', 'to'], ['v', 'via'], ['o', 'event'], ['u', 'allow-events'], ['r', 'refer-to'], ['b', 'referred-by'], ['x', 'session-expires'], ['y', 'identity']]) {
      assert.equal(headerKey(c), long);
      assert.equal(headerKey(c.toUpperCase()), long);
    }
  });
  it('round-trips through the serializer with CRLF framing and Content-Length', () => {
    for (const text of [INVITE, REGISTER, RINGING, OK, OPTIONS, MESSAGE]) {
      const m = ok(text);
      const wire = m.serialize();
      const s = wire.toString();
      assert.ok(!/[^\r]\n/.test(s), 'every line ends in CRLF');
      const again = ok(wire);
      assert.equal(again.body.length, m.body.length);
      assert.equal(again.contentLength(), m.body.length);
      assert.deepEqual(again.headers.map((h) => h.key), m.headers.map((h) => h.key).filter((k) => k !== 'content-length').concat('content-length'));
    }
    const r = new SipRequest('OPTIONS', 'sip:a@b', [['Via', 'SIP/2.0/UDP h;branch=z9hG4bKx'], ['From', '<sip:x@y>;tag=1'], ['To', '<sip:a@b>'], ['Call-ID', 'c'], ['CSeq', '1 OPTIONS']], 'hé');
    assert.match(r.toString(), /Content-Length: 3\r\n\r\nhé$/);
  });
  it('builds responses that copy Via, From, To (with tag), Call-ID and CSeq', () => {
    const req = ok(INVITE) as SipRequest;
    const res = createResponse(req, 486, undefined, { toTag: 'tt' });
    assert.equal(res.reason, 'Busy Here');
    assert.equal(res.toTag(), 'tt');
    assert.equal(res.get('via'), req.get('via'));
    assert.equal(res.callId(), req.callId());
    assert.equal(res.cseq()!.seq, 314159);
  });
  it('handles multi-line Via and comma-separated values', () => {
    const m = ok(INVITE.replace('Max-Forwards: 70', 'Via: SIP/2.0/TCP p1.example.org;branch=z9hG4bKa, SIP/2.0/UDP [2001:db8::2]:5070;branch=z9hG4bKb\r\nvia: SIP/2.0/UDP p3\r\n ;branch=z9hG4bKc\r\nMax-Forwards: 70'));
    const vias = m.vias();
    assert.deepEqual(vias.map((v) => v.host), ['192.0.2.10', 'p1.example.org', '2001:db8::2', 'p3']);
    assert.equal(vias[2].port, 5070);
    assert.equal(vias[3].branch, 'z9hG4bKc');
    m.removeTopVia();
    assert.equal(m.topVia()!.host, 'p1.example.org');
  });
  it('enforces its bounds', () => {
    const big = Buffer.alloc(DEFAULT_LIMITS.maxMessageSize + 1, 0x41);
    assert.equal(bad(big).canRespond, false);
    const many = INVITE.replace('Max-Forwards: 70', 'Max-Forwards: 70' + '\r\nX-H: 1'.repeat(300));
    assert.match(bad(many).reason, /too many headers/);
    const long = INVITE.replace('Max-Forwards: 70', 'Max-Forwards: 70\r\nX-Long: ' + 'a'.repeat(9000));
    assert.match(bad(long).reason, /too long/);
    const folded = INVITE.replace('Max-Forwards: 70', 'Max-Forwards: 70\r\nX-Long: a' + '\r\n aaaaaaaaaaaaaaaaaaaa'.repeat(500));
    assert.match(bad(folded).reason, /too long/);
    const longUri = INVITE.replace('INVITE sip:bob@', `INVITE sip:${'b'.repeat(5000)}@`);
    const r = bad(longUri);
    assert.equal(r.status, 414);
    assert.equal(r.canRespond, true);
    // A request line past the line bound is still answered: 414 when the URI is what is long, else 400.
    const lineUri = bad(INVITE.replace('INVITE sip:bob@', `INVITE sip:${'b'.repeat(20_000)}@`));
    assert.deepEqual([lineUri.status, lineUri.canRespond], [414, true]);
    const lineVersion = bad(INVITE.replace('SIP/2.0\r\nVia', `SIP/2.0${'x'.repeat(20_000)}\r\nVia`));
    assert.deepEqual([lineVersion.status, lineVersion.canRespond], [400, true]);
    const lineResponse = bad(`SIP/2.0 200 ${'O'.repeat(20_000)}\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n\r\n`);
    assert.equal(lineResponse.canRespond, false);
  });
  it('answers 400 only when the request can be routed back', () => {
    const noCallId = bad(INVITE.replace(/Call-ID: .*\r\n/, ''));
    assert.equal(noCallId.canRespond, true);
    assert.equal(noCallId.status, 400);
    assert.ok(noCallId.request);
    const noVia = bad(INVITE.replace(/Via: .*\r\n/, ''));
    assert.equal(noVia.canRespond, false);
    const badResponse = bad(RINGING.replace(/CSeq: .*\r\n/, ''));
    assert.equal(badResponse.canRespond, false, 'responses are never answered');
    assert.equal(bad('garbage\r\n\r\n').canRespond, false);
    assert.equal(bad('').canRespond, false);
    assert.equal(bad('\r\n\r\n').canRespond, false);
  });
});

describe('stream framing', () => {
  it('cuts messages by Content-Length across arbitrary chunk boundaries, with keep-alives', () => {
    const stream = Buffer.from('\r\n\r\n' + INVITE + OPTIONS + '\r\n' + MESSAGE);
    for (const size of [1, 7, 100, stream.length]) {
      const framer = new StreamFramer();
      const frames: Buffer[] = [];
      let pings = 0;
      for (let i = 0; i < stream.length; i += size) {
        const r = framer.push(stream.subarray(i, i + size));
        assert.equal(r.error, undefined);
        frames.push(...r.frames);
        pings += r.pings;
      }
      assert.equal(frames.length, 3, `chunk ${size}`);
      assert.equal(pings, size === 1 ? 0 : 1);
      assert.equal(parseMessage(frames[2], DEFAULT_LIMITS, true).ok, true);
      assert.equal(framer.pending, 0);
    }
  });
  it('a message dribbled one byte at a time costs linear time', () => {
    const body = 'x'.repeat(30000);
    const wire = Buffer.from(INVITE.replace(/Content-Length: \d+/, `Content-Length: ${body.length}`).replace('Max-Forwards: 70', 'Max-Forwards: 70\r\nX-Pad: ' + 'p'.repeat(8000) + ('\r\nX-More: ' + 'q'.repeat(100)).repeat(200)).replace(/\r\n\r\n[\s\S]*$/, '\r\n\r\n' + body));
    const framer = new StreamFramer();
    const started = Date.now();
    let frames = 0;
    for (let i = 0; i < wire.length; i++) frames += framer.push(wire.subarray(i, i + 1)).frames.length;
    assert.equal(frames, 1);
    assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms for ${wire.length} one-byte pushes`);
  });

  it('refuses streams without Content-Length or beyond the size bound', () => {
    assert.ok(new StreamFramer().push(Buffer.from(INVITE.replace(/Content-Length: \d+\r\n/, ''))).error);
    assert.ok(new StreamFramer().push(Buffer.from(INVITE.replace(/Content-Length: \d+/, 'Content-Length: 999999'))).error);
    const framer = new StreamFramer({ ...DEFAULT_LIMITS, maxMessageSize: 1000 });
    assert.ok(framer.push(Buffer.alloc(2000, 0x41)).error);
  });
});

describe('Via', () => {
  it('reads LWS around the protocol slashes and comments', () => {
    const v = parseVia('SIP  /   2.0  / udp   host.example.com : 5070 ;  branch = z9hG4bKx ;rport');
    assert.ok(v);
    assert.equal(v.transport, 'UDP');
    assert.equal(v.port, 5070);
    assert.equal(v.branch, 'z9hG4bKx');
  });
});

describe('compact header names written (system compact_headers)', () => {
  it('writes the compact names pjsip writes, the others in full, and reads back the same message', () => {
    const parsed = parseMessage(Buffer.from(INVITE));
    assert.ok(parsed.ok);
    const message = parsed.message;
    message.add('Supported', 'timer');
    message.add('Event', 'refer');
    message.add('Refer-To', '<sip:bob@example.com>');
    const text = message.serialize(true).toString('utf8');
    const names = text.split('\r\n\r\n')[0]!.split('\r\n').slice(1).map((line) => line.slice(0, line.indexOf(':')));
    for (const name of ['v', 'f', 't', 'i', 'm', 'c', 'k', 'o', 'l']) assert.ok(names.includes(name), `${name} in ${names.join(' ')}`);
    for (const name of ['CSeq', 'Max-Forwards', 'Refer-To']) assert.ok(names.includes(name), `${name} in ${names.join(' ')}`);
    assert.ok(!names.some((name) => /^(Via|From|To|Call-ID|Contact|Content-Type|Content-Length)$/i.test(name)), names.join(' '));
    const again = parseMessage(Buffer.from(text));
    assert.ok(again.ok);
    assert.equal(again.message.callId(), message.callId());
    assert.equal(again.message.get('to'), message.get('to'));
    assert.deepEqual(again.message.body, message.body);
    assert.equal(message.serialize().toString('utf8').includes('\r\nVia: '), true, 'without compact the names are as written');
  });

  it('writes a header named like an Object member (constructor, __proto__) as it was named', () => {
    const parsed = parseMessage(Buffer.from(INVITE));
    assert.ok(parsed.ok);
    const message = parsed.message;
    message.add('Constructor', 'a');
    message.add('__proto__', 'b');
    const text = message.serialize(true).toString('utf8');
    assert.ok(text.includes('\r\nConstructor: a\r\n'), text);
    assert.ok(text.includes('\r\n__proto__: b\r\n'), text);
  });
});
