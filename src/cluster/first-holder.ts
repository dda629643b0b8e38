// A playback or live recording has no subject of its own: every other member is asked at once and
// only its holder serves the request (the others answer "not owner"). Waiting for every answer
// made each such request as slow as the slowest member — a member alive by its heartbeats but too
// busy to answer held every playback and recording control for the whole request_timeout_ms
// while the holder had answered in a millisecond. The holder's answer is taken as soon as it comes.
import { NOT_OWNER_HEADER, type ClusterAriResponse } from './wire.ts';

/** Whether an answer comes from the member holding the resource asked about. */
export function fromHolder(answer: ClusterAriResponse | undefined): answer is ClusterAriResponse {
  return answer !== undefined && answer.headers[NOT_OWNER_HEADER] === undefined;
}

/**
 * The first answer from a holder; undefined once every member has answered "not owner" or not at
 * all (undefined: no answer in time). The answers must not reject.
 */
export function firstHolder(answers: ReadonlyArray<Promise<ClusterAriResponse | undefined>>): Promise<ClusterAriResponse | undefined> {
  return new Promise((resolve) => {
    let pending = answers.length;
    if (pending === 0) resolve(undefined);
    for (const answer of answers) {
      void answer.then((response) => {
        if (fromHolder(response)) resolve(response);
        else if (--pending === 0) resolve(undefined);
      });
    }
  });
}
