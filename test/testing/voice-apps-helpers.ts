// The example voice apps (examples/voice-apps) run as their README says, beside a test server
// whose dialplan is theirs: shared by the virtual-caller suites.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../helpers/server.ts';

export const VOICE_APPS = fileURLToPath(new URL('../../examples/voice-apps/', import.meta.url));
export const SCENARIOS = `${VOICE_APPS}scenarios/`;

export function startVoiceAppServer(): Promise<TestServer> {
  return startTestServer({ dialplan: { file: `${VOICE_APPS}extensions.conf` } });
}

/** Starts an example app (`ivr.js`, `echo-bot.js`) against the server; resolves once it listens. */
export async function startExampleApp(server: TestServer, script: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [`${VOICE_APPS}${script}`], { env: { ...process.env, ARI_URL: server.url, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  // 30 s: a node process's start on a loaded machine can take many seconds.
  for (const deadline = Date.now() + 30_000; !output.includes('waiting for calls'); ) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${script} did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // What the app says after starting (an ARI request it failed, …) goes to the test's output.
  child.stdout!.removeAllListeners('data');
  child.stderr!.removeAllListeners('data');
  child.stderr!.on('data', (d) => process.stderr.write(`[${script}] ${String(d)}`));
  return child;
}

export function stopExampleApp(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
