// `patchbay test <files…>`: virtual callers (src/testing) run scenario files against a running
// Patchbay, or against one started here from a configuration (the composition root hands in how
// to start one: this floor cannot build a server). Progress and a summary on stdout, JUnit XML and
// JSON on request, exit code 0 only when every call passed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { AriLink, PromptLibrary, jsonReport, junitXml, readScenarioFile, runLoad, runSuite, summaryText, ScenarioError, type Scenario } from '../testing/index.ts';
import { DEFAULT_SOUND_DIRS } from '../testing/audio-match.ts';
import { progressLine } from '../testing/reports.ts';
import { readConfig, resolveTarget } from './admin.ts';
import { CliError, EXIT } from './client.ts';

/** A server started for the run: its address, and how to stop it. */
export interface StartedServer {
  readonly url: string;
  /** Its sound directories (prompts are looked for there first). */
  readonly soundDirs: readonly string[];
  stop(): Promise<void>;
}

/** Starts a Patchbay from a configuration file (the default configuration when undefined). */
export type ServerStarter = (configPath: string | undefined) => Promise<StartedServer>;

const TEST_EXIT = Object.freeze({ passed: 0, failed: 1, usage: EXIT.usage, unreachable: EXIT.unreachable });

const USAGE = `usage: patchbay test [options] <scenario.yaml…>

Runs virtual callers: each scenario file dials an extension or a SIP URI and checks what the caller
hears (prompts, tones, silence, speech) and the ARI events of the call (docs/testing-voice-apps.md).

Options:
      --url <url>          server address (default: from the configuration's http.bind and http.port)
  -u, --user <name>        ARI user (default: the first read-write user with a plain password)
  -p, --password <pw>      ARI password
  -c, --config <file>      the server's configuration (for the address, the users and --start)
      --start              start a Patchbay from the configuration for the run, stop it after
      --junit <file>       write JUnit XML
      --json <file>        write the results as JSON (- for stdout)
      --artifacts <dir>    where failing calls' recordings and event transcripts go
                           (default ./patchbay-test-results)
      --sounds <dir>       look prompts up here first (repeatable)
      --load <n>           load mode: n callers of the (one) scenario
      --rate <n>           load mode: callers started per second (default: all at once)
      --concurrency <n>    most calls at once (default 100)
  -q, --quiet              no line per call
  -h, --help               this text

Exit codes: 0 every call passed, 1 a call failed, 2 bad command line or scenario file,
3 server unreachable.
`;

export interface TestCommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

const defaultIo: TestCommandIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

export async function runTestCommand(argv: readonly string[], startServer?: ServerStarter, io: TestCommandIo = defaultIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let server: StartedServer | undefined;
  let link: AriLink | undefined;
  try {
    const { values, positionals } = parseTestArgs(argv);
    if (values.help) {
      io.stdout(USAGE);
      return TEST_EXIT.passed;
    }
    if (positionals.length === 0) throw new CliError('give at least one scenario file (patchbay test --help)', EXIT.usage);
    const scenarios = positionals.flatMap((file) => readScenarioFile(file));
    const load = optionalCount(values.load, '--load');
    const rate = optionalCount(values.rate, '--rate') ?? 0;
    if (load !== undefined && scenarios.length !== 1) throw new CliError(`--load runs one scenario; the files hold ${scenarios.length}`, EXIT.usage);
    const where = { config: values.config, url: values.url, user: values.user, password: values.password };
    const config = readConfig(where, env);
    let soundDirs = [...(values.sounds ?? []), ...DEFAULT_SOUND_DIRS];
    let target = resolveTarget(config, where, env);
    if (values.start) {
      if (!startServer) throw new CliError('--start is not available here', EXIT.usage);
      server = await startServer(values.config ?? env.PATCHBAY_CONFIG);
      target = { ...target, base: server.url };
      soundDirs = [...(values.sounds ?? []), ...server.soundDirs.flatMap((dir) => [`${dir}/en`, dir]), ...DEFAULT_SOUND_DIRS];
    }
    link = new AriLink({ url: target.base, authorization: target.auth });
    try {
      await link.connect();
    } catch (err) {
      throw new CliError((err as Error).message, EXIT.unreachable);
    }
    const options = {
      link,
      prompts: new PromptLibrary(soundDirs),
      artifactsDir: values.artifacts ?? 'patchbay-test-results',
      concurrency: optionalCount(values.concurrency, '--concurrency'),
      onResult: values.quiet ? undefined : (call: Parameters<typeof progressLine>[0]) => io.stdout(`${progressLine(call)}\n`),
    };
    io.stdout(describeRun(scenarios, load, rate));
    const result = load !== undefined ? await runLoad(scenarios[0]!, load, rate, options) : await runSuite(scenarios, options);
    io.stdout(`\n${summaryText(result)}`);
    if (values.junit) writeReport(values.junit, junitXml(result));
    if (values.json === '-') io.stdout(jsonReport(result));
    else if (values.json) writeReport(values.json, jsonReport(result));
    return result.calls.every((c) => c.passed) ? TEST_EXIT.passed : TEST_EXIT.failed;
  } catch (err) {
    if (err instanceof CliError) {
      io.stderr(`patchbay test: ${err.message}\n`);
      return err.code;
    }
    if (err instanceof ScenarioError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`patchbay test: ${(err as Error).message}\n`);
      return EXIT.usage;
    }
    io.stderr(`patchbay test: ${(err as Error).message ?? String(err)}\n`);
    return TEST_EXIT.failed;
  } finally {
    link?.close();
    await server?.stop();
  }
}

function parseTestArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      user: { type: 'string', short: 'u' },
      password: { type: 'string', short: 'p' },
      config: { type: 'string', short: 'c' },
      start: { type: 'boolean' },
      junit: { type: 'string' },
      json: { type: 'string' },
      artifacts: { type: 'string' },
      sounds: { type: 'string', multiple: true },
      load: { type: 'string' },
      rate: { type: 'string' },
      concurrency: { type: 'string' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function optionalCount(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new CliError(`${option} takes a whole number from 1 to 100000`, EXIT.usage);
  return n;
}

function describeRun(scenarios: readonly Scenario[], load: number | undefined, rate: number): string {
  if (load !== undefined) return `load: ${load} callers of "${scenarios[0]!.name}"${rate ? ` at ${rate}/s` : ' at once'}\n`;
  const calls = scenarios.reduce((sum, s) => sum + s.repeat, 0);
  return `${scenarios.length} scenario${scenarios.length === 1 ? '' : 's'}, ${calls} call${calls === 1 ? '' : 's'}\n`;
}

function writeReport(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}
