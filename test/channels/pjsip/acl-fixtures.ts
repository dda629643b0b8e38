// What the two ACL unit suites (type=acl sections, an endpoint's own ACL) both need: a pjsip.conf
// read with no errors, a logger whose lines the test reads back, and a request from an address.
import assert from 'node:assert/strict';
import pino from 'pino';
import { loadPjsipConf, type PjsipConfig } from '../../../src/channels/pjsip/config/index.ts';
import { SipRequest } from '../../../src/sip/message.ts';
import type { Source } from '../../../src/sip/transport-types.ts';

export const configOf = (text: string): PjsipConfig => {
  const loaded = loadPjsipConf(text, 'pjsip.conf');
  assert.deepEqual(loaded.errors, []);
  return loaded.config;
};

export interface LogLine {
  level: number;
  msg: string;
  suppressed?: number;
}

/** A logger at debug whose lines are kept, parsed, in `lines`. */
export function capture(): { log: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level: 'debug' }, { write: (text: string) => void lines.push(JSON.parse(text) as LogLine) });
  return { log, lines };
}

/** An out-of-dialog `method` from bob (INVITE) or a (REGISTER), with a Contact when one is given. */
export const aclRequest = (method: 'INVITE' | 'REGISTER', contact?: string): SipRequest =>
  new SipRequest(method, method === 'INVITE' ? 'sip:100@example.org' : 'sip:example.org', [
    ['Via', 'SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1'],
    ['From', method === 'INVITE' ? '"Bob" <sip:bob@example.org>;tag=1' : '<sip:a@example.org>;tag=1'],
    ['To', method === 'INVITE' ? '<sip:100@example.org>' : '<sip:a@example.org>'],
    ['Call-ID', 'c1'],
    ['CSeq', `1 ${method}`],
    ...(contact ? ([['Contact', contact]] as [string, string][]) : []),
  ]);

export const from = (address: string, port = 5060): Source => ({ transport: 'UDP', address, port });
