// A live recording's name is one server's: a second `record` under a name being recorded answers
// 409 there. Each member keeps its own live recordings, so a name recorded on A would be taken
// again on C, and `/recordings/live/{name}` asked through a third member would then reach
// whichever holder answered first. Before a record request is served (here, or by the member
// holding its channel or bridge) the other members are asked whether one of them is recording
// under that name: a holder makes it 409, as one server answers. The window is one NATS round trip
// (two records of one free name at the same instant through two members are not caught), as for a
// client-chosen channel id.
import { NOT_OWNER_HEADER, type ClusterAriRequest, type ClusterAriResponse, type OwnedResource } from './wire.ts';

/** The operations that start a live recording under a client-chosen name. */
export const RECORD_OPERATIONS: ReadonlySet<string> = new Set(['channels.record', 'bridges.record']);

export interface LiveNameRouting {
  /** The request asked of every other live member with the resource named (undefined: no answer in time). */
  askOthers(request: ClusterAriRequest, owned: OwnedResource): Promise<ReadonlyArray<ClusterAriResponse | undefined>>;
}

/** 409 when another member is recording under the request's name; undefined when none is (or the name is missing: the server answers 400). */
export async function refuseNameRecordedElsewhere(request: ClusterAriRequest, routing: LiveNameRouting): Promise<ClusterAriResponse | undefined> {
  const name = request.query.get('name');
  if (name === null || name === '') return undefined;
  const probe: ClusterAriRequest = { method: 'GET', path: `/recordings/live/${encodeURIComponent(name)}`, query: new URLSearchParams(), user: request.user, transport: request.transport };
  const answers = await routing.askOthers(probe, { kind: 'recording', id: name });
  const held = answers.some((answer) => answer !== undefined && answer.status === 200 && answer.headers[NOT_OWNER_HEADER] === undefined);
  // Asterisk's message for a name in use (the one this member's own check gives).
  return held ? { status: 409, headers: {}, json: { message: `Recording '${name}' already exists and can not be overwritten` } } : undefined;
}
