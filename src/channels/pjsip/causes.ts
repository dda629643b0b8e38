// Q.850 hang-up causes and SIP statuses, both ways, as chan_pjsip maps them: the final response
// of an INVITE refused for a cause, the cause of an INVITE the far end refused, and the cause a
// far end gave in a Reason header.
/**
 * Q.850 cause → SIP final status for a call refused before it was answered (Asterisk's
 * hangup_cause2sip; a cause it does not list, normal clearing among them, ends the INVITE with
 * 603 Decline as Asterisk's session termination does).
 */
export function statusForCause(cause: number): number {
  switch (cause) {
    case 1: // unallocated number
    case 2:
    case 3:
      return 404;
    case 17:
      return 486;
    case 18:
      return 408;
    case 19:
      return 480;
    case 20:
      return 480;
    case 21:
      return 403;
    case 22:
      return 410;
    case 27:
      return 502;
    case 28:
      return 484;
    case 29:
      return 501;
    case 31:
      return 480;
    case 34:
    case 38:
    case 41:
    case 42:
    case 44:
    case 47:
      return 503;
    case 58:
    case 65:
    case 88:
      return 488;
    case 127:
      return 500;
    default:
      return 603;
  }
}

/** SIP final status from the far end → Q.850 cause (Asterisk's hangup_sip2cause). */
export function causeForStatus(status: number): number {
  switch (status) {
    case 401:
    case 402:
    case 403:
    case 407:
      return 21;
    case 404:
    case 410:
      return 1;
    case 408:
      return 18;
    case 480:
      return 19;
    case 483:
      return 25;
    case 484:
      return 28;
    case 486:
    case 600:
      return 17;
    // Request Terminated (the INVITE CANCELled): interworking, as chan_pjsip ends such a session.
    case 487:
      return 127;
    case 488:
    case 606:
      return 58;
    case 500:
      return 127;
    case 501:
      return 29;
    case 502:
      return 27;
    case 503:
      return 34;
    case 504:
      return 102;
    case 603:
      return 21;
    default:
      if (status >= 500) return 41;
      // Not a failure (Reason: SIP;cause=200, a CANCEL's "Call completed elsewhere"): normal clearing.
      if (status < 400) return 16;
      return 127;
  }
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
 * The Reason headers of our CANCEL for a hang-up with `cause`, as res_pjsip_rfc3326 writes them: the
 * Q.850 cause, after "Call completed elsewhere" when another callee answered (cause 26).
 */
export function cancelReason(cause: number): Array<[string, string]> {
  const q850: [string, string] = ['Reason', `Q.850;cause=${cause & 0x7f}`];
  return cause === 26 ? [['Reason', 'SIP;cause=200;text="Call completed elsewhere"'], q850] : [q850];
}
