// The pieces of SIP call media that need no call: DTMF read from SIP INFO bodies (dtmf-relay and
// dtmf, hostile bodies refused), and the RTP port range's even/odd pairs.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, test } from 'node:test';
import { dtmfFromInfo } from '../../../src/channels/pjsip/dtmf-info.ts';
import { RtpPortRange } from '../../../src/media/rtp/port-range.ts';

describe('DTMF in INFO bodies', () => {
  test('dtmf-relay and dtmf read; other types, bad signals and huge bodies give nothing; durations bounded', () => {
    const read = (type: string | undefined, body: string) => dtmfFromInfo(type, Buffer.from(body, 'latin1'));
    assert.deepEqual(read('application/dtmf-relay', 'Signal=5\r\nDuration=160\r\n'), { digit: '5', durationMs: 160 });
    assert.deepEqual(read('Application/DTMF-Relay; charset=x', 'signal = a\nduration=99999'), { digit: 'A', durationMs: 10_000 });
    assert.deepEqual(read('application/dtmf-relay', 'Signal=10'), { digit: '*', durationMs: 100 });
    assert.deepEqual(read('application/dtmf', ' # '), { digit: '#', durationMs: 100 });
    assert.equal(read('application/dtmf-relay', 'Signal=16'), undefined);
    assert.equal(read('application/dtmf-relay', 'Signal=E'), undefined);
    assert.equal(read('application/dtmf', '55'), undefined);
    assert.equal(read('text/plain', 'Signal=5'), undefined);
    assert.equal(read(undefined, 'Signal=5'), undefined);
    assert.equal(read('application/dtmf-relay', `Signal=5\r\n${'x'.repeat(2000)}`), undefined);
    assert.equal(read('application/dtmf-relay', ''), undefined);
  });
});

describe('RTP port pairs', () => {
  test('RTP on an even port, RTCP on the odd one above; a pair whose RTCP port is taken is skipped', async () => {
    const start = 40_000 + 2 * Math.floor(Math.random() * 5000);
    const squatter = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => squatter.bind(start + 1, '127.0.0.1', resolve));
    const range = new RtpPortRange(start, start + 5);
    const pair = await range.bindPair('127.0.0.1');
    try {
      assert.equal(pair.rtp.address().port, start + 2, 'the first pair (odd port taken) skipped');
      assert.equal(pair.rtcp.address().port, start + 3);
      // The next pair would end beyond the range (start + 4, start + 5 is in range; start + 6 is not).
      const second = await range.bindPair('127.0.0.1');
      assert.equal(second.rtp.address().port, start + 4);
      second.rtp.close();
      second.rtcp.close();
    } finally {
      pair.rtp.close();
      pair.rtcp.close();
      squatter.close();
    }
  });
});
