// The npm API of virtual callers (`import { call } from 'patchbay-ari/testing'`): the steps of a
// scenario file, written as objects in a test.
//
//   const result = await call({
//     ari: { url: 'http://127.0.0.1:8088', username: 'asterisk', password: 'asterisk' },
//     dial: '100@ivr',
//     steps: [{ expect_audio: 'welcome' }, { send_dtmf: '1' }, { expect_hangup: { cause: 16 } }],
//   });
//   assert.ok(result.passed, result.error);
import { AriLink, type AriTarget } from './ari-link.ts';
import { DEFAULT_SOUND_DIRS } from './audio-match.ts';
import { Caller } from './caller.ts';
import { PromptLibrary } from './listener.ts';
import { parseScenarios } from './scenario.ts';
import type { CallResult } from './steps.ts';

export { AriRequestError, type AriTarget } from './ari-link.ts';
export type { CallResult, DialSpec, Step, StepResult } from './steps.ts';
export { readScenarioFile, ScenarioError, type Scenario } from './scenario.ts';
export { runLoad, runSuite, type RunOptions, type ScenarioCallResult, type SuiteResult } from './runner.ts';
export { junitXml, jsonReport, percentile, summarize, summaryText, type Summary } from './reports.ts';
export { AriLink, PromptLibrary };

/** A call as a scenario file writes it: `dial` and `steps` in the file's syntax. */
export interface CallOptions {
  /** The server (not needed when `callers` is given). */
  readonly ari?: AriTarget;
  /** Callers opened by `openCallers`, to share one events connection between many calls. */
  readonly callers?: Callers;
  readonly name?: string;
  /** `100@ivr`, or `{ to, caller_id, variables, headers, sip_endpoint, answer_timeout }`. */
  readonly dial: string | Readonly<Record<string, unknown>>;
  readonly steps: readonly unknown[];
  /** Where a failing call's recording and events are kept. */
  readonly artifactsDir?: string;
  /** Directories `prompt` names are looked up in (default: Asterisk's sound directories). */
  readonly soundDirs?: readonly string[];
}

/** A connection for many calls. */
export interface Callers {
  readonly link: AriLink;
  readonly prompts: PromptLibrary;
  close(): void;
}

/** Connects callers to a server (one events WebSocket for all their calls). */
export async function openCallers(ari: AriTarget, soundDirs: readonly string[] = DEFAULT_SOUND_DIRS): Promise<Callers> {
  const link = new AriLink(ari);
  await link.connect();
  return { link, prompts: new PromptLibrary(soundDirs), close: () => link.close() };
}

/** Makes one call and runs its steps; the result says whether it passed, and why not. */
export async function call(options: CallOptions): Promise<CallResult> {
  const name = options.name ?? 'call';
  const [scenario] = parseScenarios({ name, dial: options.dial, steps: options.steps }, name);
  let callers = options.callers;
  const owned = callers === undefined;
  if (!callers) {
    if (!options.ari) throw new Error('call() needs ari (the server) or callers (from openCallers)');
    callers = await openCallers(options.ari, options.soundDirs);
  }
  try {
    return await new Caller({ name, link: callers.link, prompts: callers.prompts, artifactsDir: options.artifactsDir }).run(scenario!.dial, scenario!.steps);
  } finally {
    if (owned) callers.close();
  }
}
