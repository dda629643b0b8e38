// The Reason headers (RFC 3326) a far end's BYE, CANCEL or refusal carries, read as
// res_pjsip_rfc3326 reads them, and the ones our CANCEL carries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cancelReason, causeForStatus, causeFromReason } from '../../../src/channels/pjsip/causes.ts';

test('a Reason gives the Q.850 cause first (its low 7 bits), else the SIP status mapped, else the fallback', () => {
  assert.equal(causeFromReason('Q.850;cause=31', 127), 31);
  assert.equal(causeFromReason('Q.850 ; cause = 17 ;text="Busy"', 127), 17);
  assert.equal(causeFromReason('Q.850;cause=200', 127), 200 & 0x7f);
  assert.equal(causeFromReason('Q.850;cause=0', 127), 127, 'cause 0 is none');
  assert.equal(causeFromReason('SIP;cause=200;text="Call completed elsewhere"', 127), 16);
  assert.equal(causeFromReason('SIP;cause=486', 127), 17);
  assert.equal(causeFromReason('SIP;cause=487', 16), 127);
  assert.equal(causeFromReason('SIP;cause=99999', 5), 5, 'not a status');
  assert.equal(causeFromReason('garbage;cause=17', 5), 5);
  assert.equal(causeFromReason(undefined, 5), 5);
});

test('487 (a CANCELled INVITE) is interworking, as hangup_sip2cause maps it', () => {
  assert.equal(causeForStatus(487), 127);
});

test('our CANCEL carries the Q.850 cause, after "Call completed elsewhere" when another callee answered', () => {
  assert.deepEqual(cancelReason(127), [['Reason', 'Q.850;cause=127']]);
  assert.deepEqual(cancelReason(26), [['Reason', 'SIP;cause=200;text="Call completed elsewhere"'], ['Reason', 'Q.850;cause=26']]);
});
