/**
 * RFC 4475 torture cases, each message written for this test from the RFC's description of what
 * the case exercises (section numbers and names from the RFC), not copied from it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SipRequest, SipResponse } from '../../src/sip/message.ts';
import { parseMessage, type ParseResult } from '../../src/sip/parser.ts';
import type { OtherUri, SipUri } from '../../src/sip/uri.ts';

const msg = (lines: string[], body = ''): string => lines.join('\r\n') + '\r\n\r\n' + body;

function valid(text: string): SipRequest & SipResponse {
  const r = parseMessage(text);
  assert.ok(r.ok, `expected valid, got: ${r.ok ? '' : r.reason}`);
  return r.message as SipRequest & SipResponse;
}

function invalid(text: string, expect: { canRespond: boolean; status?: number }): Extract<ParseResult, { ok: false }> {
  const r = parseMessage(text);
  assert.equal(r.ok, false, 'expected a rejection');
  const f = r as Extract<ParseResult, { ok: false }>;
  assert.equal(f.canRespond, expect.canRespond, `canRespond (reason: ${f.reason})`);
  if (expect.status !== undefined) assert.equal(f.status, expect.status);
  return f;
}

const BASE = (method: string, uri = 'sip:watson@example.org'): string[] => [
  `${method} ${uri} SIP/2.0`,
  'Via: SIP/2.0/UDP 192.0.2.40;branch=z9hG4bKtorture1',
  'Max-Forwards: 70',
  'To: <sip:watson@example.org>',
  'From: <sip:bell@example.com>;tag=77',
  'Call-ID: torture@192.0.2.40',
  `CSeq: 1 ${method}`,
];

describe('RFC 4475 §3.1.1 valid messages', () => {
  it('3.1.1.1 wsinv: a short tortuous INVITE (odd whitespace, folding, case, compact forms)', () => {
    const sdp = 'v=0\r\no=x 1 1 IN IP4 192.0.2.9\r\ns=-\r\nc=IN IP4 192.0.2.9\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';
    const m = valid(msg([
      'INVITE sip:holmes@baker.example.org;oddparam SIP/2.0',
      'tO  :',
      ' sip:holmes@baker.example.org  ;  tag   =  221b',
      'fROM     : "Dr \\"J\\" Watson \\\\"     <sip:watson@example.org>',
      '   ;',
      '  tag = 1887x',
      'mAx-FoRwArDs: 0069',
      'call-iD: ws.abc@192.0.2.9',
      'Content-Length    : ' + Buffer.byteLength(sdp),
      'cSeQ: 0007',
      '   INVITE',
      'Via   : SIP   /  2.0',
      '  /UDP',
      '     192.0.2.9;branch=z9hG4bKws1',
      's  :',
      'OddHeader:   one value',
      '  continued here',
      'StrangeValue: ;;,,;;,;',
      'c: application/sdp',
      'Route:',
      '  <sip:proxy.example.org;lr;odd=value;flag>',
      'v:   SIP /2.0  / TCP    relay.example.net  ;',
      '  branch   =  z9hG4bKws2  ,',
      ' SIP  /  2.0 / UDP   192.168.250.10  ; branch=',
      '  z9hG4bKws3',
      'm:"Quoted \\"\\"" <sip:watson@example.org> ; extra =',
      '      thing ;',
      '   flagonly ; q = 0.4',
    ], sdp));
    assert.equal(m.method, 'INVITE');
    assert.equal(m.toTag(), '221b');
    assert.equal(m.fromTag(), '1887x');
    assert.equal(m.from()!.displayName, 'Dr "J" Watson \\');
    assert.equal(m.maxForwards(), 69);
    assert.deepEqual(m.cseq(), { seq: 7, method: 'INVITE' });
    assert.equal(m.get('subject'), '');
    assert.equal(m.get('oddheader'), 'one value continued here');
    assert.deepEqual(m.vias().map((v) => [v.transport, v.host, v.branch]), [
      ['UDP', '192.0.2.9', 'z9hG4bKws1'],
      ['TCP', 'relay.example.net', 'z9hG4bKws2'],
      ['UDP', '192.168.250.10', 'z9hG4bKws3'],
    ]);
    const contacts = m.contacts();
    assert.ok(Array.isArray(contacts));
    assert.equal(contacts[0].displayName, 'Quoted ""');
    assert.equal(contacts[0].params.get('extra'), 'thing');
    assert.equal(contacts[0].q, 0.4);
    assert.equal(m.routes('route').length, 1);
    assert.equal(m.body.length, Buffer.byteLength(sdp));
  });

  it('3.1.1.2 intmeth: a wide range of valid characters in method, URI, tokens and UTF-8 values', () => {
    const method = "!odd-Method0123456789_*+`.%really'~";
    const m = valid(msg([
      `${method} sip:1_odd.URI~(is-it!so)&yes+that$/mad?,/;;*:&pw+has=1,strange!*pa$$~d_.(ok-then)@example.com SIP/2.0`,
      "Via: SIP/2.0/TCP host1.example.com;branch=z9hG4bK-.!%66*_+`'~",
      'To: "BEL:\\\u0007 NUL-free ünïcødé \u263a" <sip:1_odd.URI~(is-it!so)&yes+that$/mad?,/;;*@example.com>',
      "From: token1~` token2'+_ token3*%!.- <sip:mundane@example.com>;fromParam''~+*_!.-%=\"\u0440\u0430\u0441\u0441\u043a\u0430\u0437\";tag=_token~1'+`*%!-.",
      "Call-ID: intmeth.word%ZK-!.*_+'@word`~)(><:\\/\"][?}{",
      `CSeq: 139122385 ${method}`,
      'Max-Forwards: 255',
      "extensionHeader-!.%*+_`'~: \ufeff\u5927\u5012\u666f\u8def",
      'Content-Length: 0',
    ]));
    assert.equal(m.method, method);
    const uri = m.uri as SipUri;
    assert.equal(uri.user, '1_odd.URI~(is-it!so)&yes+that$/mad?,/;;*');
    assert.equal(uri.password, '&pw+has=1,strange!*pa$$~d_.(ok-then)');
    assert.equal(uri.host, 'example.com');
    assert.equal(m.fromTag(), "_token~1'+`*%!-.");
    assert.equal(m.from()!.displayName, "token1~` token2'+_ token3*%!.-");
    assert.equal(m.get("EXTENSIONHEADER-!.%*+_`'~"), '\ufeff\u5927\u5012\u666f\u8def');
    assert.equal(m.maxForwards(), 255);
  });

  it('3.1.1.3 esc01: valid use of %-escaping in URIs', () => {
    const m = valid(msg([
      'INVITE sip:sips%3Awatson%40example.org@example.net SIP/2.0',
      'To: sip:%77atson@example.net',
      'From: <sip:I%20have%20spaces@example.net>;tag=938',
      'Max-Forwards: 87',
      'i: esc01.239409asdfakjkn23onasd0-3234',
      'CSeq: 234234 INVITE',
      'Via: SIP/2.0/UDP host5.example.net;branch=z9hG4bKkdjuw',
      'C: application/sdp',
      'Contact: <sip:cal%6Cer@host5.example.net;%6C%72;n%61me=v%61lue%25%34%31>',
      'Content-Length: 0',
    ]));
    const uri = m.uri as SipUri;
    assert.equal(uri.user, 'sips:watson@example.org');
    assert.equal(uri.host, 'example.net');
    assert.equal((m.from()!.uri as SipUri).user, 'I have spaces');
    assert.equal((m.to()!.uri as SipUri).user, 'watson');
    const c = m.contacts();
    assert.ok(Array.isArray(c) && (c[0].uri as SipUri).user === 'caller');
  });

  it('3.1.1.4 escnull: escaped nulls in URIs', () => {
    const m = valid(msg([
      'REGISTER sip:example.com SIP/2.0',
      'To: sip:null-%00-null@example.com',
      'From: sip:null-%00-null@example.com;tag=839923423',
      'Max-Forwards: 70',
      'Call-ID: escnull.39203ndfvkjdasfkq3w4otrq0adsfdfnavd',
      'CSeq: 14398234 REGISTER',
      'Via: SIP/2.0/UDP host5.example.com;branch=z9hG4bKkdjuw',
      'Contact: <sip:%00@host5.example.com>',
      'Contact: <sip:%00%00@host5.example.com>',
      'L:0',
    ]));
    assert.equal((m.to()!.uri as SipUri).user, 'null-\u0000-null');
    const c = m.contacts();
    assert.ok(Array.isArray(c));
    assert.deepEqual(c.map((x) => (x.uri as SipUri).user), ['\u0000', '\u0000\u0000']);
  });

  it("3.1.1.5 esc02: '%' that is not an escape (method token, display name)", () => {
    const m = valid(msg([
      'RE%47IST%45R sip:registrar.example.com SIP/2.0',
      'To: "%Z%45" <sip:resource@example.com>',
      'From: "%Z%45" <sip:resource@example.com>;tag=f232jadfj23',
      'Call-ID: esc02.asdfnqwo34rq23i34jrjasdcnl23nrlknsdf',
      'Via: SIP/2.0/TCP host.example.com;rport;branch=z9hG4bK209%fzsnel234',
      'CSeq: 29344 RE%47IST%45R',
      'Max-Forwards: 70',
      'Contact: <sip:alias1@host1.example.com>',
      'C%6Fntact: <sip:alias2@host2.example.com>',
      'Contact: <sip:alias3@host3.example.com>',
      'l: 0',
    ]));
    assert.equal(m.method, 'RE%47IST%45R', 'methods are compared as written');
    assert.equal(m.to()!.displayName, '%Z%45');
    const c = m.contacts();
    assert.ok(Array.isArray(c) && c.length === 2, 'C%6Fntact is an unknown header, not Contact');
    assert.equal(m.get('C%6Fntact'), '<sip:alias2@host2.example.com>');
  });

  it('3.1.1.6 lwsdisp: no LWS between display name and <', () => {
    const m = valid(msg([...BASE('OPTIONS').filter((l) => !l.startsWith('From')), 'From: caller<sip:caller@example.com>;tag=323', 'l: 0']));
    assert.equal(m.from()!.displayName, 'caller');
    assert.equal(m.fromTag(), '323');
  });

  it('3.1.1.7 longreq: long values in header fields', () => {
    const tag = 'longtag'.repeat(100);
    const vias = Array.from({ length: 30 }, (_, i) => `SIP/2.0/TCP sip${i}.example.com:5060;branch=z9hG4bK${'x'.repeat(50)}${i}`);
    const m = valid(msg([
      `INVITE sip:${'user'.repeat(50)}@example.com SIP/2.0`,
      `To: "${'I have a user name of '.repeat(30)}extreme proportion" <sip:${'user'.repeat(50)}@example.com:6000;unknownparam1=${'very'.repeat(60)}long>`,
      `From: sip:${'amazinglylongcallername'.repeat(5)}@example.net;tag=${tag}`,
      `Call-ID: ${'longreq.onereallylongcallid'.repeat(40)}`,
      'CSeq: 3882340 INVITE',
      ...vias.map((v) => `Via: ${v}`),
      `Unknown-${'LongLong'.repeat(20)}Name: unknown-${'long'.repeat(100)}-value; unknown-${'long'.repeat(30)}-parameter-name = unknown-${'long'.repeat(30)}-parameter-value`,
      'Max-Forwards: 70',
      'Content-Length: 0',
    ]));
    assert.equal(m.fromTag(), tag);
    assert.equal(m.vias().length, 30);
    assert.equal((m.uri as SipUri).user, 'user'.repeat(50));
  });

  it('3.1.1.8 dblreq: extra trailing octets in a UDP datagram are ignored', () => {
    const first = msg([...BASE('REGISTER', 'sip:example.com'), 'Content-Length: 0']);
    const second = msg([...BASE('INVITE'), 'Content-Length: 0']);
    const m = valid(first + second);
    assert.equal(m.method, 'REGISTER');
    assert.equal(m.body.length, 0);
  });

  it('3.1.1.9 semiuri: semicolon-separated parameters in the URI user part', () => {
    const m = valid(msg([...BASE('OPTIONS', 'sip:user;par=u%40example.net@example.com'), 'l: 0']));
    const uri = m.uri as SipUri;
    assert.equal(uri.user, 'user;par=u@example.net');
    assert.equal(uri.host, 'example.com');
    assert.equal(uri.params.size, 0);
  });

  it('3.1.1.10 transports: varied and unknown transport types', () => {
    const m = valid(msg([
      'OPTIONS sip:user@example.com SIP/2.0',
      'To: sip:user@example.com',
      'From: <sip:caller@example.com>;tag=323',
      'Max-Forwards: 70',
      'Call-ID: transports.kijh4akdnaqjkwendsasfdj',
      'Accept: application/sdp',
      'CSeq: 60 OPTIONS',
      'Via: SIP/2.0/UDP t1.example.com;branch=z9hG4bKkdjuw',
      'Via: SIP/2.0/SCTP t2.example.com;branch=z9hG4bKklasjdhf',
      'Via: SIP/2.0/TLS t3.example.com;branch=z9hG4bK2980unddj',
      'Via: SIP/2.0/UNKNOWN t4.example.com;branch=z9hG4bKasd0f3en',
      'Via: SIP/2.0/TCP t5.example.com;branch=z9hG4bK0a9idfnee',
      'l: 0',
    ]));
    assert.deepEqual(m.vias().map((v) => v.transport), ['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP']);
  });

  it('3.1.1.11 mpart01: a multipart MIME body is carried whole', () => {
    const body = '--boundary42\r\nContent-Type: text/plain\r\n\r\nhello\r\n--boundary42\r\nContent-Type: application/octet-stream\r\n\r\n\u0000\u0001\u0002\r\n--boundary42--\r\n';
    const m = valid(msg([...BASE('MESSAGE'), 'Content-Type: multipart/mixed;boundary=boundary42', `Content-Length: ${Buffer.byteLength(body)}`], body));
    assert.equal(m.body.toString(), body);
  });

  it('3.1.1.12 unreason: unusual reason phrase (UTF-8, symbols)', () => {
    const r = valid(msg(['SIP/2.0 200 = 2**3 * 5**2 \u043d\u043e \u0441\u0442\u043e \u0434\u0435\u0432\u044f\u043d\u043e\u0441\u0442\u043e', 'Via: SIP/2.0/UDP 192.0.2.198;branch=z9hG4bK1324923', 'Call-ID: unreason.1234ksdfak3j2erwedfsASdf', 'CSeq: 35 INVITE', 'From: sip:user@example.com;tag=11141343', 'To: sip:user@example.edu;tag=2229', 'Content-Length: 0']));
    assert.equal(r.status, 200);
    assert.match(r.reason, /^= 2\*\*3 \* 5\*\*2 но/);
  });

  it('3.1.1.13 noreason: empty reason phrase', () => {
    const lines = ['Via: SIP/2.0/UDP 192.0.2.105;branch=z9hG4bK2398ndaoe', 'Call-ID: noreason.asndj203insdf99223ndf', 'CSeq: 35 INVITE', 'From: <sip:user@example.com>;tag=39ansfi3', 'To: <sip:user@example.edu>;tag=902jndnke3', 'Content-Length: 0'];
    assert.equal(valid(msg(['SIP/2.0 100 ', ...lines])).reason, '');
    assert.equal(valid(msg(['SIP/2.0 100', ...lines])).status, 100);
  });
});

describe('RFC 4475 §3.1.2 invalid messages', () => {
  it('3.1.2.1 badinv01: extraneous header field separators → rejected', () => {
    invalid(msg(['INVITE sip:user@example.com SIP/2.0', 'To: sip:j.user@example.com', 'From: sip:caller@example.net;;tag=134161461246', 'Max-Forwards: 7', 'Call-ID: badinv01.0ha0isndaksdjasdf3234nas', 'CSeq: 8 INVITE', 'Via: SIP/2.0/UDP 192.0.2.15;;,;,,', 'l: 0']), { canRespond: false });
    // the same From with a readable Via: answered with 400
    invalid(msg(['INVITE sip:user@example.com SIP/2.0', 'To: sip:j.user@example.com', 'From: sip:caller@example.net;;tag=134161461246', 'Max-Forwards: 7', 'Call-ID: badinv01.x', 'CSeq: 8 INVITE', 'Via: SIP/2.0/UDP 192.0.2.15;branch=z9hG4bKb1', 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.2 clerr: Content-Length larger than the message → 400', () => {
    invalid(msg([...BASE('INVITE'), 'Content-Type: application/sdp', 'Content-Length: 9999'], 'v=0\r\n'), { canRespond: true, status: 400 });
  });
  it('3.1.2.3 ncl: negative Content-Length → 400', () => {
    invalid(msg([...BASE('INVITE'), 'Content-Length: -999'], 'v=0\r\n'), { canRespond: true, status: 400 });
  });
  it('3.1.2.4 scalar02: request scalar fields with overlarge values → 400', () => {
    invalid(msg(['REGISTER sip:example.com SIP/2.0', 'Via: SIP/2.0/TCP host129.example.com;branch=z9hG4bKzzxdiwo34sw;received=192.0.2.129', 'To: <sip:user@example.com>', 'From: <sip:user@example.com>;tag=239232jh3', 'CSeq: 36893488147419103232 REGISTER', 'Call-ID: scalar02.23o0pd9vanlq3wnrlnewofjas9ui32', 'Max-Forwards: 300', 'Expires: 1' + '0'.repeat(20), 'Contact: <sip:user@host129.example.com>;expires=280297596632815', 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.5 scalarlg: response scalar fields with overlarge values → dropped', () => {
    invalid(msg(['SIP/2.0 503 Service Unavailable', 'Via: SIP/2.0/TCP host129.example.com;branch=z9hG4bKzzxdiwo34sw;received=192.0.2.129', 'To: <sip:user@example.com>', 'From: <sip:other@example.net>;tag=2easdjfejw', 'CSeq: 9292394834772304023312 OPTIONS', 'Call-ID: scalarlg.noase0of0234hn2qofoaf0232aewf2394r', 'Retry-After: 949302838503028349304023988', 'Warning: 1812 overture "In Progress"', 'l: 0']), { canRespond: false });
    // each field alone is enough
    invalid(msg(['SIP/2.0 503 Service Unavailable', 'Via: SIP/2.0/TCP h;branch=z9hG4bKa', 'To: <sip:u@e>;tag=1', 'From: <sip:o@e>;tag=2', 'CSeq: 1 OPTIONS', 'Call-ID: x', 'Retry-After: 949302838503028349304023988', 'l: 0']), { canRespond: false });
    invalid(msg(['SIP/2.0 503 Service Unavailable', 'Via: SIP/2.0/TCP h;branch=z9hG4bKa', 'To: <sip:u@e>;tag=1', 'From: <sip:o@e>;tag=2', 'CSeq: 1 OPTIONS', 'Call-ID: x', 'Warning: 1812 overture "In Progress"', 'l: 0']), { canRespond: false });
  });
  it('3.1.2.6 quotbal: unterminated quoted string in a display name → 400', () => {
    invalid(msg([...BASE('INVITE').filter((l) => !l.startsWith('To')), 'To: "Mr. J. User <sip:j.user@example.com>', 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.7 ltgtruri: <> around the Request-URI → 400', () => {
    invalid(msg([...BASE('INVITE', '<sip:user@example.com>'), 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.8 lwsruri: LWS inside the Request-URI → 400', () => {
    invalid(msg([...BASE('INVITE', 'sip:user@example.com; lr'), 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.9 lwsstart: multiple SP between Request-Line elements → 400', () => {
    const lines = BASE('INVITE');
    lines[0] = 'INVITE  sip:user@example.com  SIP/2.0';
    invalid(msg([...lines, 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.10 trws: SP at the end of the Request-Line → 400', () => {
    const lines = BASE('OPTIONS');
    lines[0] += '  ';
    invalid(msg([...lines, 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.11 escruri: escaped headers in the Request-URI → 400', () => {
    invalid(msg([...BASE('INVITE', 'sip:user@example.com?Route=%3Csip:example.com%3E'), 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.13 regbadct: a Contact addr-spec with headers not in <> → 400', () => {
    invalid(msg([...BASE('REGISTER', 'sip:example.com'), 'Contact: sip:user@example.com?Route=%3Csip:sip.example.com%3E', 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.14 badaspec: spaces inside the angle brackets → 400', () => {
    invalid(msg([...BASE('OPTIONS').filter((l) => !l.startsWith('To')), 'To: "Watson, Thomas" < sip:t.watson@example.org >', 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.15 baddn: non-token characters in an unquoted display name → 400', () => {
    invalid(msg([...BASE('OPTIONS').filter((l) => !l.startsWith('From')), 'From: Bell, Alexander <sip:a.g.bell@example.com>;tag=43', 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.16 badvers: unknown protocol version → 505', () => {
    const lines = BASE('OPTIONS');
    lines[0] = 'OPTIONS sip:t.watson@example.org SIP/7.0';
    invalid(msg([...lines, 'l: 0']), { canRespond: true, status: 505 });
  });
  it('3.1.2.17 mismatch01: CSeq method differs from the request method → 400', () => {
    const lines = BASE('OPTIONS').map((l) => (l.startsWith('CSeq') ? 'CSeq: 8 INVITE' : l));
    invalid(msg([...lines, 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.18 mismatch02: unknown method with a CSeq method mismatch → 400', () => {
    const lines = BASE('NEWMETHOD').map((l) => (l.startsWith('CSeq') ? 'CSeq: 3 INVITE' : l));
    invalid(msg([...lines, 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.1.2.19 bigcode: overlarge response code → dropped', () => {
    invalid(msg(['SIP/2.0 4294967301 better not break the receiver', 'Via: SIP/2.0/UDP 192.0.2.105;branch=z9hG4bK2398ndaoe', 'Call-ID: bigcode.asdof3uj203asdnf3429uasdhfas3ehjasdfas9i', 'CSeq: 353494 INVITE', 'From: <sip:user@example.com>;tag=39ansfi3', 'To: <sip:user@example.edu>;tag=902jndnke3', 'Content-Length: 0']), { canRespond: false });
  });
});

describe('RFC 4475 §3.2–3.4: transaction-layer and application-layer cases parse', () => {
  it('3.2.1 insuf: missing Call-ID, From and To → 400', () => {
    invalid(msg(['INVITE sip:user@example.com SIP/2.0', 'CSeq: 193942 INVITE', 'Via: SIP/2.0/UDP 192.0.2.95;branch=z9hG4bKkdj.insuf', 'Content-Length: 0']), { canRespond: true, status: 400 });
  });
  it('3.2.2 unkscm: unknown Request-URI scheme parses (the TU answers 416)', () => {
    const m = valid(msg([...BASE('OPTIONS', 'nobodyKnowsThisScheme:totallyopaquecontent'), 'l: 0']));
    assert.deepEqual(m.uri, { kind: 'other', scheme: 'nobodyknowsthisscheme', opaque: 'totallyopaquecontent' } satisfies OtherUri);
  });
  it('3.2.3 novelsc: known but atypical scheme parses', () => {
    const m = valid(msg([...BASE('OPTIONS', 'soap.beep://192.0.2.103:3002'), 'l: 0']));
    assert.equal(m.uri.scheme, 'soap.beep');
  });
  it('3.2.4 unksm2: unknown URI schemes in To, From and Contact parse', () => {
    const m = valid(msg(['REGISTER sip:example.com SIP/2.0', 'To: isbn:2983792873', 'From: <http://www.example.com>;tag=3234233', 'Call-ID: unksm2.daksdj@hyphenated-host.example.com', 'CSeq: 234902 REGISTER', 'Max-Forwards: 70', 'Via: SIP/2.0/UDP 192.0.2.21:5060;branch=z9hG4bKkdjuw', 'Contact: <name:John_Smith>', 'l: 0']));
    assert.equal(m.to()!.uri.scheme, 'isbn');
    assert.equal(m.fromTag(), '3234233');
  });
  it('3.3.1 multi01: several values in single-value fields → 400', () => {
    invalid(msg([...BASE('INVITE'), 'Call-ID: another@192.0.2.40', 'l: 0']), { canRespond: true, status: 400 });
    invalid(msg([...BASE('INVITE'), 'From: <sip:b@example.com>;tag=8', 'l: 0']), { canRespond: true, status: 400 });
    invalid(msg([...BASE('INVITE'), 'Max-Forwards: 5', 'l: 0']), { canRespond: true, status: 400 });
    invalid(msg([...BASE('INVITE'), 'CSeq: 2 INVITE', 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.3.2 mcl01: several Content-Length values → 400', () => {
    invalid(msg([...BASE('OPTIONS'), 'Content-Length: 0', 'l: 0']), { canRespond: true, status: 400 });
  });
  it('3.3.5 zeromf: Max-Forwards 0 parses (the TU answers 483)', () => {
    assert.equal(valid(msg([...BASE('OPTIONS').map((l) => (l.startsWith('Max') ? 'Max-Forwards: 0' : l)), 'l: 0'])).maxForwards(), 0);
  });
  it('3.3.8 cparam01/cparam02: Contact parameters belong to the header or the URI by form', () => {
    const a = valid(msg([...BASE('REGISTER', 'sip:example.com'), 'Contact: sip:+19725552222@gw1.example.net;unknownparam', 'l: 0'])).contacts();
    assert.ok(Array.isArray(a) && a[0].params.has('unknownparam') && (a[0].uri as SipUri).params.size === 0);
    const b = valid(msg([...BASE('REGISTER', 'sip:example.com'), 'Contact: <sip:+19725552222@gw1.example.net;unknownparam>', 'l: 0'])).contacts();
    assert.ok(Array.isArray(b) && !b[0].params.has('unknownparam') && (b[0].uri as SipUri).params.has('unknownparam'));
  });
  it('3.3.10 regescrt: escaped headers inside a Contact URI in <> parse', () => {
    const c = valid(msg([...BASE('REGISTER', 'sip:example.com'), 'Contact: <sip:user@example.com?Route=%3Csip:sip.example.com%3E>', 'l: 0'])).contacts();
    assert.ok(Array.isArray(c));
    assert.equal((c[0].uri as SipUri).headers.get('Route'), '%3Csip:sip.example.com%3E');
  });
  it('3.4.1 inv2543: an RFC 2543 INVITE (no branch, no From tag) parses', () => {
    const m = valid(msg(['INVITE sip:UserB@example.com SIP/2.0', 'Via: SIP/2.0/UDP 192.0.2.15', 'From: <sip:UserA@example.com>', 'To: <sip:UserB@example.com>', 'Call-ID: 242t@192.0.2.15', 'CSeq: 1 INVITE', 'l: 0']));
    assert.equal(m.topVia()!.branch, undefined);
    assert.equal(m.fromTag(), undefined);
  });
});
