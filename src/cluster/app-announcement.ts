// What the apps bucket says of an application: the member holding its event WebSocket (its home),
// and, additively (a member that knows only `node` and `app` reads the rest as absent):
// - `group`: the applications that share its WebSocket, whose relayed events the home orders
//   together (event-order.ts);
// - `away` / `held_until`: its connection is away from the home, and until when (ms since the
//   epoch, the home's clock) channels sent to it wait on every member (held-calls.ts);
// - `resumable`: its connection asked for the grace period, so a member serving a forwarded request
//   naming it reads the entry afresh (it may have gone away a moment ago).
import { MAX_ORDERED_GROUP } from './event-order.ts';
import { parseJsonObjectText } from '../util/json-object.ts';
import { subjectToken } from './wire.ts';

const MAX_NAME = 256;

export interface AppAnnouncement {
  readonly node: string;
  readonly app: string;
  readonly group?: readonly string[];
  readonly away?: boolean;
  readonly heldUntil?: number;
  readonly resumable?: boolean;
}

const isName = (value: unknown): value is string => typeof value === 'string' && value !== '' && value.length <= MAX_NAME;

/** The entry under `key`, or undefined when it is not one (hostile or broken: ignored). */
export function parseAnnouncement(key: string, value: string): AppAnnouncement | undefined {
  const parsed = parseJsonObjectText(value);
  if (typeof parsed === 'string') return undefined;
  const { node, app, group, away, held_until: heldUntil, resumable } = parsed;
  if (!isName(node) || !isName(app) || subjectToken(app) !== key) return undefined;
  // A group that is not a short list of names is left out: the events are then not ordered together.
  const groupOk = Array.isArray(group) && group.length <= MAX_ORDERED_GROUP && group.every(isName) && group.includes(app);
  return {
    node,
    app,
    ...(groupOk ? { group: group as string[] } : {}),
    ...(away === true ? { away: true } : {}),
    ...(away === true && typeof heldUntil === 'number' && Number.isFinite(heldUntil) ? { heldUntil } : {}),
    ...(resumable === true ? { resumable: true } : {}),
  };
}

export function formatAnnouncement(announcement: AppAnnouncement): string {
  const { node, app, group, away, heldUntil, resumable } = announcement;
  return JSON.stringify({
    node,
    app,
    ...(group !== undefined && group.length > 1 ? { group } : {}),
    ...(away ? { away: true } : {}),
    ...(away && heldUntil !== undefined ? { held_until: heldUntil } : {}),
    ...(resumable ? { resumable: true } : {}),
  });
}
