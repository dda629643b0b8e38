// Stored recordings are files of the member that recorded them (its recordings directory): a
// request for one (`GET`/`DELETE /recordings/stored/{name}`, `/file`, `/copy`) is served here when
// this member has it, else asked of every other member at once, and the answer of the one that has
// it (any answer but 404) is given; nobody has it: this member's 404.
import type { ClusterAriRequest, ClusterAriResponse } from './wire.ts';

/** The operations on one stored recording. */
export const STORED_RECORDING_OPERATIONS: ReadonlySet<string> = new Set(['recordings.getStored', 'recordings.deleteStored', 'recordings.getStoredFile', 'recordings.copyStored']);

export interface StoredRecordingRouting {
  local(request: ClusterAriRequest): Promise<ClusterAriResponse>;
  /** The request asked of each other live member (undefined: it did not answer). */
  askOthers(request: ClusterAriRequest): Promise<ReadonlyArray<ClusterAriResponse | undefined>>;
}

export async function routeStoredRecording(request: ClusterAriRequest, routing: StoredRecordingRouting): Promise<ClusterAriResponse> {
  const here = await routing.local(request);
  if (here.status !== 404) return here;
  const answers = await routing.askOthers(request);
  return answers.find((answer) => answer !== undefined && answer.status !== 404) ?? here;
}
