// The Reason headers (RFC 3326) a far end's BYE, CANCEL or refusal carries, read as
// res_pjsip_rfc3326 reads them, and the ones our CANCEL carries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cancelReason, causeForStatus, causeFromReason, reasonHeaders, statusForCause } from '../../../src/channels/pjsip/causes.ts';

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

// Asterisk 22's tables, transcribed as figures from res_pjsip.c (ast_sip_hangup_sip2cause) and
// chan_pjsip.c (hangup_cause2sip): every listed row, and a sample of each fallback.
const SIP_TO_CAUSE: ReadonlyArray<readonly [number, number]> = [
  [302, 23], [401, 21], [403, 21], [404, 1], [405, 127], [407, 21], [408, 18], [409, 41], [410, 22], [411, 127], [413, 127],
  [414, 127], [415, 127], [420, 3], [480, 19], [481, 127], [482, 127], [483, 19], [484, 28], [485, 1], [486, 17], [487, 127],
  [488, 58], [491, 127], [493, 127], [500, 38], [501, 29], [502, 27], [503, 34], [504, 102], [505, 127], [600, 17], [603, 21],
  [604, 1], [606, 58],
  // Fallbacks: another 4xx 127, 5xx 34, 6xx 127; anything else (2xx, another 3xx) normal clearing.
  [402, 127], [422, 127], [499, 127], [513, 34], [580, 34], [599, 34], [601, 127], [699, 127], [200, 16], [301, 16], [380, 16],
];

const CAUSE_TO_SIP: ReadonlyArray<readonly [number, number]> = [
  [23, 302], [1, 404], [3, 404], [2, 404], [34, 503], [42, 503], [18, 408], [19, 480], [20, 480], [21, 403], [22, 410], [31, 480],
  [28, 484], [17, 486], [38, 500], [29, 501], [66, 503], [27, 502], [58, 488], [127, 500],
  // Not in hangup_cause2sip: 0 there, which ast_sip_session_terminate sends as 603.
  [16, 603], [26, 603], [41, 603], [44, 603], [47, 603], [65, 603], [88, 603], [102, 603], [0, 603],
];

test('a SIP final status maps to the cause Asterisk 22 gives it (ast_sip_hangup_sip2cause), row for row', () => {
  for (const [status, cause] of SIP_TO_CAUSE) assert.equal(causeForStatus(status), cause, `SIP ${status}`);
});

test('a cause refuses an incoming INVITE with the status Asterisk 22 sends (hangup_cause2sip, else 603)', () => {
  for (const [cause, status] of CAUSE_TO_SIP) assert.equal(statusForCause(cause), status, `cause ${cause}`);
});

test('suppress_q850_reason_headers leaves the Q.850 Reason out, but not "Call completed elsewhere"', () => {
  assert.deepEqual(reasonHeaders(17, true), []);
  assert.deepEqual(reasonHeaders(17), [['Reason', 'Q.850;cause=17']]);
  assert.deepEqual(reasonHeaders(26, true), [['Reason', 'SIP;cause=200;text="Call completed elsewhere"']]);
});
