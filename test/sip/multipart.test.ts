// The SDP part of a multipart body (src/sip/multipart.ts), as Asterisk's stack finds it: the first
// application/sdp part of a multipart/mixed or multipart/alternative body, whatever else is there;
// hostile bodies (no boundary, a boundary never seen, endless parts, no close delimiter) give none
// or the part, never a throw.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundaryOf, MAX_PARTS, sdpPartOf } from '../../src/sip/multipart.ts';

const SDP = 'v=0\r\no=x 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';
const body = (...parts: string[]): Buffer => Buffer.from(`${parts.map((part) => `--b1\r\n${part}`).join('\r\n')}\r\n--b1--\r\n`, 'latin1');

describe('multipart SDP parts', () => {
  it('finds the SDP part beside ISUP, in mixed and alternative bodies, with quoted boundaries', () => {
    const mixed = body('Content-Type: application/isup\r\nContent-Disposition: signal\r\n\r\n\u0001\u0002', `Content-Type: application/sdp\r\n\r\n${SDP}`);
    assert.equal(sdpPartOf('multipart/mixed;boundary=b1', mixed)?.toString('latin1'), SDP);
    assert.equal(sdpPartOf('Multipart/Alternative; boundary="b1"', mixed)?.toString('latin1'), SDP);
    assert.equal(sdpPartOf('multipart/mixed;boundary=b1', body(`content-type: Application/SDP; charset=x\r\n\r\n${SDP}`))?.toString('latin1'), SDP);
    // A preamble before the first delimiter is skipped (RFC 2046 §5.1.1).
    assert.equal(sdpPartOf('multipart/mixed;boundary=b1', Buffer.concat([Buffer.from('preamble\r\n'), mixed]))?.toString('latin1'), SDP);
  });

  it('gives none for other types, missing or invalid boundaries, parts without SDP, and nested multiparts', () => {
    const sdpPart = body(`Content-Type: application/sdp\r\n\r\n${SDP}`);
    assert.equal(sdpPartOf('multipart/related;boundary=b1', sdpPart), undefined);
    assert.equal(sdpPartOf('application/sdp', sdpPart), undefined);
    assert.equal(sdpPartOf('multipart/mixed', sdpPart), undefined);
    assert.equal(sdpPartOf(`multipart/mixed;boundary=${'x'.repeat(71)}`, sdpPart), undefined);
    assert.equal(sdpPartOf('multipart/mixed;boundary=other', sdpPart), undefined);
    assert.equal(sdpPartOf('multipart/mixed;boundary=b1', body('Content-Type: text/plain\r\n\r\nhello', `\r\n${SDP}`)), undefined);
    assert.equal(sdpPartOf('multipart/mixed;boundary=b1', body(`Content-Type: multipart/mixed;boundary=in\r\n\r\n--in\r\nContent-Type: application/sdp\r\n\r\n${SDP}\r\n--in--`)), undefined);
    assert.equal(boundaryOf('multipart/mixed; boundary=""'), undefined);
  });

  it('looks at no more than MAX_PARTS parts, and hostile bodies never throw', () => {
    const many = body(...Array.from({ length: MAX_PARTS }, () => 'Content-Type: text/plain\r\n\r\nx'), `Content-Type: application/sdp\r\n\r\n${SDP}`);
    assert.equal(sdpPartOf('multipart/mixed;boundary=b1', many), undefined);
    const hostile = ['--b1', '--b1\r\n', '--b1\r\n\r\n', '--b1\r\nContent-Type: application/sdp', '--b1\r\nContent-Type: application/sdp\r\n\r\n', '--b1--', '--b1\r\n'.repeat(10_000), '\r\n--b1\r\nContent-Type: application/sdp\r\n\r\nv=0'];
    for (const text of hostile) sdpPartOf('multipart/mixed;boundary=b1', Buffer.from(text, 'latin1'));
    // Without a close delimiter the SDP part runs to the end of the body.
    assert.equal(sdpPartOf('multipart/mixed;boundary=b1', Buffer.from(`--b1\r\nContent-Type: application/sdp\r\n\r\n${SDP}`, 'latin1'))?.toString('latin1'), SDP);
  });
});
