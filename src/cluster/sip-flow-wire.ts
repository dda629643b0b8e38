// What travels between members for a dialog relayed over another member's connection to a phone
// (sip-flows.ts), as JSON on the receiving member's subject `pb.<c>.node.<node>.sipflow`. Every
// message is checked field by field before use: a bad one is refused (answered 400, or dropped).
import { isIP } from 'node:net';
import { DEFAULT_LIMITS } from '../sip/parser.ts';
import { MAX_URI_LENGTH } from '../sip/registrar.ts';
import { parseJsonObject } from '../util/json-object.ts';

/** The subject a member takes flow messages on. */
export function sipFlowSubject(prefix: string, node: string): string {
  return `${prefix}.node.${node}.sipflow`;
}

/** The largest SIP message relayed: the SIP stack's own bound on what it parses. */
export const MAX_RELAYED_MESSAGE = DEFAULT_LIMITS.maxMessageSize;

/** Dialling member → holder (a request): write this message on the phone's connection for `contact`. */
export interface FlowSend {
  readonly op: 'send';
  readonly from: string;
  readonly flow: string;
  readonly contact: string;
  /** The SIP message, base64. */
  readonly data: string;
}

/** Dialling member → holder: the dialog ended, the holder may forget it. */
export interface FlowRelease {
  readonly op: 'release';
  readonly from: string;
  readonly flow: string;
}

/** Holder → dialling member: a message the phone sent in the dialog, and where it came from. */
export interface FlowDeliver {
  readonly op: 'deliver';
  readonly from: string;
  readonly flow: string;
  readonly data: string;
  readonly address: string;
  readonly port: number;
}

/** Holder → dialling member: the phone's connection closed (or the holder forgot the dialog). */
export interface FlowClosed {
  readonly op: 'closed';
  readonly from: string;
  readonly flow: string;
  readonly reason: string;
}

export type FlowMessage = FlowSend | FlowRelease | FlowDeliver | FlowClosed;

/** The holder's answer to a send: 200, or a status and why (400 malformed, 403 not a member, 404 no connection, 503 a bound …). */
export interface FlowReply {
  readonly status: number;
  readonly reason?: string;
}

const NODE_RE = /^[A-Za-z0-9_-]{1,64}$/;
const FLOW_RE = /^[A-Za-z0-9_-]{1,64}$/;
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
/** Base64 of the largest message, and room for the rest of the JSON. */
const MAX_DATA_CHARS = Math.ceil(MAX_RELAYED_MESSAGE / 3) * 4;
const MAX_WIRE_BYTES = MAX_DATA_CHARS + 2 * MAX_URI_LENGTH + 1024;

export function encodeFlow(message: FlowMessage | FlowReply): Uint8Array {
  return Buffer.from(JSON.stringify(message), 'utf8');
}

/** The SIP bytes of a send or a deliver, or undefined when they are not base64 or too large. */
export function flowData(message: FlowSend | FlowDeliver): Buffer | undefined {
  const data = Buffer.from(message.data, 'base64');
  return data.length > 0 && data.length <= MAX_RELAYED_MESSAGE ? data : undefined;
}

/** A flow message, or why it is refused. */
export function decodeFlowMessage(raw: Uint8Array): FlowMessage | string {
  if (raw.length > MAX_WIRE_BYTES) return 'message too large';
  const v = parseJsonObject(raw);
  if (typeof v === 'string') return v;
  if (typeof v.from !== 'string' || !NODE_RE.test(v.from)) return 'bad from';
  if (typeof v.flow !== 'string' || !FLOW_RE.test(v.flow)) return 'bad flow';
  const data = (): string | undefined => (typeof v.data === 'string' && v.data.length > 0 && v.data.length <= MAX_DATA_CHARS && BASE64_RE.test(v.data) ? v.data : undefined);
  switch (v.op) {
    case 'send': {
      const bytes = data();
      if (bytes === undefined) return 'bad data';
      if (typeof v.contact !== 'string' || v.contact.length === 0 || v.contact.length > MAX_URI_LENGTH) return 'bad contact';
      return { op: 'send', from: v.from, flow: v.flow, contact: v.contact, data: bytes };
    }
    case 'release':
      return { op: 'release', from: v.from, flow: v.flow };
    case 'deliver': {
      const bytes = data();
      if (bytes === undefined) return 'bad data';
      if (typeof v.address !== 'string' || isIP(v.address) === 0) return 'bad address';
      if (typeof v.port !== 'number' || !Number.isInteger(v.port) || v.port < 0 || v.port > 65535) return 'bad port';
      return { op: 'deliver', from: v.from, flow: v.flow, data: bytes, address: v.address, port: v.port };
    }
    case 'closed':
      return { op: 'closed', from: v.from, flow: v.flow, reason: typeof v.reason === 'string' ? v.reason.slice(0, 200) : 'closed' };
    default:
      return 'unknown op';
  }
}

/** The holder's answer, or a 502 when it is not one. */
export function decodeFlowReply(raw: Uint8Array): FlowReply {
  try {
    const value = JSON.parse(Buffer.from(raw).toString('utf8')) as unknown;
    if (typeof value === 'object' && value !== null) {
      const { status, reason } = value as Record<string, unknown>;
      if (typeof status === 'number' && Number.isInteger(status) && status >= 100 && status < 700) return { status, ...(typeof reason === 'string' ? { reason: reason.slice(0, 200) } : {}) };
    }
  } catch {
    /* below */
  }
  return { status: 502, reason: 'a malformed answer from the holder' };
}
