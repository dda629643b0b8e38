/** Realistic SIP messages used by the parser tests and the fuzzer (written for these tests). */
const crlf = (lines: string[], body = ''): string => lines.join('\r\n') + '\r\n\r\n' + body;

export const SDP = [
  'v=0',
  'o=alice 2890844526 2890844526 IN IP4 192.0.2.10',
  's=-',
  'c=IN IP4 192.0.2.10',
  't=0 0',
  'm=audio 49170 RTP/AVP 0 8 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=sendrecv',
  '',
].join('\r\n');

export const INVITE = crlf([
  'INVITE sip:bob@patchbay.example.org SIP/2.0',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport',
  'Max-Forwards: 70',
  'To: Bob <sip:bob@patchbay.example.org>',
  'From: "Alice Smith" <sip:alice@example.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.example.com',
  'CSeq: 314159 INVITE',
  'Contact: <sip:alice@192.0.2.10:5060;transport=udp>',
  'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, MESSAGE',
  'Content-Type: application/sdp',
  `Content-Length: ${Buffer.byteLength(SDP)}`,
], SDP);

export const REGISTER = crlf([
  'REGISTER sip:patchbay.example.org SIP/2.0',
  'Via: SIP/2.0/TCP 192.0.2.20:50123;branch=z9hG4bKnashds7',
  'Max-Forwards: 70',
  'To: Bob <sip:bob@patchbay.example.org>',
  'From: Bob <sip:bob@patchbay.example.org>;tag=456248',
  'Call-ID: 843817637684230@998sdasdh09',
  'CSeq: 1826 REGISTER',
  'Contact: <sip:bob@192.0.2.20:50123;transport=tcp>;expires=7200;q=0.7',
  'Expires: 7200',
  'Authorization: Digest username="bob", realm="patchbay", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="sip:patchbay.example.org", response="6629fae49393a05397450978507c4ef1", algorithm=MD5',
  'Content-Length: 0',
]);

export const RINGING = crlf([
  'SIP/2.0 180 Ringing',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;received=198.51.100.7;rport=5062',
  'To: Bob <sip:bob@patchbay.example.org>;tag=a6c85cf',
  'From: "Alice Smith" <sip:alice@example.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.example.com',
  'Contact: <sip:bob@192.0.2.4>',
  'CSeq: 314159 INVITE',
  'Content-Length: 0',
]);

export const OK = crlf([
  'SIP/2.0 200 OK',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;received=198.51.100.7;rport=5062',
  'Record-Route: <sip:p1.example.org;lr>, <sip:p2.example.org;lr>',
  'To: Bob <sip:bob@patchbay.example.org>;tag=a6c85cf',
  'From: "Alice Smith" <sip:alice@example.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.example.com',
  'CSeq: 314159 INVITE',
  'Contact: <sip:bob@192.0.2.4>',
  'Content-Type: application/sdp',
  `Content-Length: ${Buffer.byteLength(SDP)}`,
], SDP);

export const OPTIONS = crlf([
  'OPTIONS sip:patchbay.example.org SIP/2.0',
  'Via: SIP/2.0/UDP 192.0.2.30;branch=z9hG4bKhjhs8ass877',
  'Max-Forwards: 70',
  'To: <sip:patchbay.example.org>',
  'From: <sip:monitor@example.net>;tag=1928301774',
  'Call-ID: a84b4c76e66710',
  'CSeq: 63104 OPTIONS',
  'Accept: application/sdp',
  'Content-Length: 0',
]);

export const MESSAGE = crlf([
  'MESSAGE sip:bob@patchbay.example.org SIP/2.0',
  'v: SIP/2.0/UDP 192.0.2.10;branch=z9hG4bK776sgdkse',
  'Max-Forwards: 70',
  'f: sip:alice@example.com;tag=49583',
  't: sip:bob@patchbay.example.org',
  'i: asd88asd77a@1.2.3.4',
  'CSeq: 1 MESSAGE',
  'X-Account: 1234',
  'c: text/plain',
  'l: 18',
], 'Watson, come here.');

export const ALL = [INVITE, REGISTER, RINGING, OK, OPTIONS, MESSAGE];
