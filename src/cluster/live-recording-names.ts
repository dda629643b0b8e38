// A live recording's name is one server's: a second `record` under a name being recorded answers
// 409 there. Each member keeps its own live recordings, so a name recorded on A would be taken
// again on C, and `/recordings/live/{name}` asked through a third member would then reach
// whichever holder answered first. Before a record request is served (here, or by the member
// holding its channel or bridge) the other members are asked whether one of them is recording
// under that name: a holder makes it 409, as one server answers. The window is one NATS round trip
// (two records of one free name at the same instant through two members are not caught), as for a
// client-chosen channel id.
import type { ClusterAriRequest, ClusterAriResponse, OwnedResource } from './wire.ts';

/** The operations that start a live recording under a client-chosen name. */
export const RECORD_OPERATIONS: ReadonlySet<string> = new Set(['channels.record', 'bridges.record']);

/**
 * How long the members are given to say they hold the name. A free name waits for every answer, so
 * one member alive by its heartbeats but not answering would otherwise hold every record request
 * for the whole request_timeout_ms; past this, a silent member is taken not to record under it.
 */
export const NAME_CHECK_TIMEOUT_MS = 1000;

export interface LiveNameRouting {
  /** The answer of the other live member holding the resource, asked of them all (first-holder.ts); undefined when none does within `timeoutMs`. */
  findHolder(request: ClusterAriRequest, owned: OwnedResource, timeoutMs: number): Promise<ClusterAriResponse | undefined>;
}

/** 409 when another member is recording under the request's name; undefined when none is (or the name is missing: the server answers 400). */
export async function refuseNameRecordedElsewhere(request: ClusterAriRequest, routing: LiveNameRouting): Promise<ClusterAriResponse | undefined> {
  const name = request.query.get('name');
  if (name === null || name === '') return undefined;
  const probe: ClusterAriRequest = { method: 'GET', path: `/recordings/live/${encodeURIComponent(name)}`, query: new URLSearchParams(), user: request.user, transport: request.transport };
  const held = (await routing.findHolder(probe, { kind: 'recording', id: name }, NAME_CHECK_TIMEOUT_MS))?.status === 200;
  // Asterisk's message for a name in use (the one this member's own check gives).
  return held ? { status: 409, headers: {}, json: { message: `Recording '${name}' already exists and can not be overwritten` } } : undefined;
}
