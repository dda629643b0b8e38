// The admin CLI: `patchbay <command>` talks to a running server through ARI. (First version:
// the command list and entry function; the commands follow.)

export const ADMIN_COMMANDS: readonly string[] = Object.freeze([
  'channels', 'bridges', 'endpoints', 'apps', 'show', 'hangup', 'originate', 'dialplan', 'reload', 'stop', 'events',
]);

export interface AdminIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Runs one admin command; resolves with the process exit code. */
export async function runAdminCommand(argv: string[], _env: NodeJS.ProcessEnv = process.env, io?: AdminIo): Promise<number> {
  const out = io ?? { stdout: (t: string) => process.stdout.write(t), stderr: (t: string) => process.stderr.write(t) };
  out.stderr(`patchbay: ${argv[0] ?? ''}: not implemented yet\n`);
  return 1;
}
