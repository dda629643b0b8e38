// Q.850 hang-up causes and SIP statuses, both ways, as chan_pjsip maps them: the final response
// of an INVITE refused for a cause, the cause of an INVITE the far end refused, and the cause a
// far end gave in a Reason header.
/**
 * Q.850 cause → SIP final status for a call refused before it was answered, row for row Asterisk
 * 22's hangup_cause2sip (chan_pjsip.c); a cause it does not list (normal clearing among them)
 * gives 0 there, and ast_sip_session_terminate ends the INVITE with 603 Decline for 0.
 */
const STATUS_FOR_CAUSE: ReadonlyMap<number, number> = new Map([
  [23, 302], // redirected to a new destination
  [1, 404], // unallocated number
  [2, 404], // no route to the transit network
  [3, 404], // no route to destination
  [34, 503], // congestion
  [42, 503], // switching equipment congestion
  [18, 408], // no user responding
  [19, 480], // no answer
  [20, 480], // subscriber absent (unregistered)
  [21, 403], // call rejected
  [22, 410], // number changed
  [31, 480], // normal, unspecified
  [28, 484], // invalid number format
  [17, 486], // user busy
  [38, 500], // network out of order (AST_CAUSE_FAILURE)
  [29, 501], // facility rejected
  [66, 503], // channel type not implemented
  [27, 502], // destination out of order
  [58, 488], // bearer capability not available (no common codec)
  [127, 500], // interworking
]);

export function statusForCause(cause: number): number {
  return STATUS_FOR_CAUSE.get(cause) ?? 603;
}

/**
 * SIP final status from the far end → Q.850 cause, row for row Asterisk 22's
 * ast_sip_hangup_sip2cause (res_pjsip.c); its fallbacks by class follow the table.
 */
const CAUSE_FOR_STATUS: ReadonlyMap<number, number> = new Map([
  [302, 23], // redirect: redirected to a new destination
  [401, 21],
  [403, 21],
  [404, 1],
  [405, 127],
  [407, 21],
  [408, 18],
  [409, 41], // conflict: temporary failure
  [410, 22], // gone: number changed
  [411, 127],
  [413, 127],
  [414, 127],
  [415, 127],
  [420, 3], // bad extension: no route to destination
  [480, 19],
  [481, 127],
  [482, 127],
  [483, 19], // too many hops: no answer (as Asterisk has it)
  [484, 28],
  [485, 1], // ambiguous: unallocated
  [486, 17],
  // Request Terminated (the INVITE CANCELled): interworking, as chan_pjsip ends such a session.
  [487, 127],
  [488, 58],
  [491, 127],
  [493, 127],
  [500, 38], // server internal error: network out of order (AST_CAUSE_FAILURE)
  [501, 29],
  [502, 27],
  [503, 34],
  [504, 102],
  [505, 127],
  [600, 17],
  [603, 21],
  [604, 1], // does not exist anywhere: unallocated
  [606, 58],
]);

export function causeForStatus(status: number): number {
  const cause = CAUSE_FOR_STATUS.get(status);
  if (cause !== undefined) return cause;
  // Another 4xx: something wrong with our request; another 5xx: the far end's trouble; another
  // 6xx: a global 4xx. Anything else (Reason: SIP;cause=200, a CANCEL's "Call completed
  // elsewhere", another 3xx) is normal clearing.
  if (status >= 400 && status < 500) return 127;
  if (status >= 500 && status < 600) return 34;
  if (status >= 600 && status < 700) return 127;
  return 16;
}

/**
 * The cause a far end gave in a Reason header (RFC 3326), as res_pjsip_rfc3326 reads a BYE's, a
 * CANCEL's or a refusal's: `Q.850;cause=N` (its low 7 bits) first, else `SIP;cause=N` mapped as a
 * status; `fallback` without either.
 */
export function causeFromReason(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const q850 = /Q\.850\s*;\s*cause\s*=\s*(\d{1,3})\b/i.exec(value);
  const q850Cause = q850 ? Number(q850[1]) & 0x7f : 0;
  if (q850Cause !== 0) return q850Cause;
  const sip = /SIP\s*;\s*cause\s*=\s*(\d{3})\b/i.exec(value);
  return sip ? causeForStatus(Number(sip[1])) : fallback;
}

/**
 * The Reason headers of our BYE, CANCEL or refusal for a hang-up with `cause`, as res_pjsip_rfc3326
 * writes them: the Q.850 cause (its low 7 bits), unless the endpoint has
 * suppress_q850_reason_headers, after "Call completed elsewhere" when another callee answered
 * (cause 26), which is sent either way.
 */
export function reasonHeaders(cause: number, suppressQ850 = false): Array<[string, string]> {
  const headers: Array<[string, string]> = cause === 26 ? [['Reason', 'SIP;cause=200;text="Call completed elsewhere"']] : [];
  if (!suppressQ850) headers.push(['Reason', `Q.850;cause=${cause & 0x7f}`]);
  return headers;
}

/** The Reason headers of our CANCEL (reasonHeaders without suppression). */
export const cancelReason = (cause: number): Array<[string, string]> => reasonHeaders(cause);
