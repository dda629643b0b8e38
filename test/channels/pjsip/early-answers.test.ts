// Which later SDP answer to our INVITE moves the media (early-answers.ts), for each setting of the
// system's and the endpoint's follow_early_media_fork and accept_multiple_sdp_answers, as pjsip's
// INVITE session and res_pjsip_session decide it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_EARLY_ANSWER_OPTIONS, EarlyAnswers, type EarlyAnswerOptions } from '../../../src/channels/pjsip/early-answers.ts';

const early = (tag: string, reliable = false) => ({ status: 183, tag, reliable });
const ok = (tag: string) => ({ status: 200, tag, reliable: false });

/** The verdicts of a sequence of responses, each taken as the rules say (an ignored one is not). */
function verdicts(options: Partial<EarlyAnswerOptions>, responses: ReadonlyArray<{ status: number; tag: string; reliable: boolean }>): string[] {
  const answers = new EarlyAnswers(() => ({ ...DEFAULT_EARLY_ANSWER_OPTIONS, ...options }));
  return responses.map((response) => {
    const verdict = answers.judge(response);
    if (verdict !== 'ignored') answers.taken(response);
    return verdict;
  });
}

describe('later SDP answers to a forked INVITE', () => {
  test('defaults (Asterisk\'s): another fork\'s 18x and 2xx move the media, the same dialog\'s new SDP does not', () => {
    assert.deepEqual(verdicts({}, [early('a'), early('b'), ok('a')]), ['first', 'fork', 'fork']);
    assert.deepEqual(verdicts({}, [early('a'), early('a'), ok('a')]), ['first', 'ignored', 'ignored']);
  });

  test('the endpoint\'s follow_early_media_fork=no: another fork\'s answer is the session\'s but the media stays, a 2xx\'s too', () => {
    assert.deepEqual(verdicts({ followEarlyMediaFork: false }, [early('a'), early('b'), ok('b')]), ['first', 'noted', 'ignored']);
    assert.deepEqual(verdicts({ followEarlyMediaFork: false }, [early('a'), ok('b')]), ['first', 'noted']);
  });

  test('the system\'s follow_early_media_fork=no: another fork\'s 18x is ignored, its 2xx still moves the media', () => {
    assert.deepEqual(verdicts({ systemFollowEarlyMediaFork: false }, [early('a'), early('b'), ok('b')]), ['first', 'ignored', 'fork']);
  });

  test('accept_multiple_sdp_answers on both: the same early dialog\'s new SDP is applied, in an 18x or the 2xx; not after a reliable 18x', () => {
    const both = { systemAcceptMultipleSdpAnswers: true, acceptMultipleSdpAnswers: true };
    assert.deepEqual(verdicts(both, [early('a'), early('A'), ok('a')]), ['first', 'update', 'update']);
    assert.deepEqual(verdicts(both, [early('a', true), early('a', true), ok('a')]), ['first', 'ignored', 'ignored']);
    assert.deepEqual(verdicts({ systemAcceptMultipleSdpAnswers: true }, [early('a'), ok('a')]), ['first', 'noted']);
    assert.deepEqual(verdicts({ acceptMultipleSdpAnswers: true }, [early('a'), ok('a')]), ['first', 'ignored']);
  });

  test('an answer in a 2xx is final: nothing after it is taken', () => {
    assert.deepEqual(verdicts({}, [ok('a'), ok('b')]), ['first', 'ignored']);
  });
});
