// Running scenarios: a suite (every scenario, `repeat` times each, side by side up to a
// concurrency) or a load (N callers of one scenario started at a rate). Each call is a Caller on
// the shared ARI link and prompt library.
import type { AriLink } from './ari-link.ts';
import { Caller } from './caller.ts';
import type { PromptLibrary } from './listener.ts';
import { sleep } from './media-leg.ts';
import type { Scenario } from './scenario.ts';
import type { CallResult } from './steps.ts';

export interface RunOptions {
  readonly link: AriLink;
  readonly prompts: PromptLibrary;
  /** Where failing calls' recordings and transcripts are kept. */
  readonly artifactsDir?: string;
  /** Most calls at once (default 100). */
  readonly concurrency?: number;
  /** Told of each call as it ends (progress). */
  readonly onResult?: (result: ScenarioCallResult) => void;
}

export interface ScenarioCallResult extends CallResult {
  readonly scenario: string;
  readonly file: string;
}

export interface SuiteResult {
  readonly calls: readonly ScenarioCallResult[];
  readonly wallMs: number;
}

interface PlannedCall {
  readonly scenario: Scenario;
  readonly name: string;
}

/** Every scenario `repeat` times, all at once up to the concurrency. */
export function runSuite(scenarios: readonly Scenario[], options: RunOptions): Promise<SuiteResult> {
  const planned = scenarios.flatMap((scenario) =>
    Array.from({ length: scenario.repeat }, (_, i) => ({ scenario, name: scenario.repeat > 1 ? `${scenario.name} #${i + 1}` : scenario.name })),
  );
  return runPlanned(planned, options, 0);
}

/** `callers` calls of one scenario, started `ratePerSecond` a second (0: all at once). */
export function runLoad(scenario: Scenario, callers: number, ratePerSecond: number, options: RunOptions): Promise<SuiteResult> {
  const planned = Array.from({ length: callers }, (_, i) => ({ scenario, name: `${scenario.name} #${i + 1}` }));
  return runPlanned(planned, options, ratePerSecond > 0 ? 1000 / ratePerSecond : 0);
}

async function runPlanned(planned: readonly PlannedCall[], options: RunOptions, intervalMs: number): Promise<SuiteResult> {
  const started = Date.now();
  const limit = Math.max(1, options.concurrency ?? 100);
  const results: ScenarioCallResult[] = new Array(planned.length);
  let next = 0;
  let running = 0;
  await new Promise<void>((resolve) => {
    if (planned.length === 0) resolve();
    let finished = 0;
    const launch = (): void => {
      while (running < limit && next < planned.length) {
        const index = next++;
        const { scenario, name } = planned[index]!;
        running++;
        const due = started + index * intervalMs;
        void sleep(Math.max(0, due - Date.now()))
          .then(() => new Caller({ name, link: options.link, prompts: options.prompts, artifactsDir: options.artifactsDir }).run(scenario.dial, scenario.steps))
          .then((result) => {
            results[index] = { ...result, scenario: scenario.name, file: scenario.file };
            options.onResult?.(results[index]!);
            running--;
            if (++finished === planned.length) resolve();
            else launch();
          });
      }
    };
    launch();
  });
  return { calls: results, wallMs: Date.now() - started };
}
