// One Patchbay cluster member in a process of its own, for the tests that kill a member abruptly
// (SIGKILL): argv[2] is the settings (YAML keys) as JSON. Prints `READY <url>` once it serves.
import { startTestServer } from '../helpers/server.ts';
import type { DeepPartialYaml } from '../../src/config/config.ts';

const overrides = JSON.parse(process.argv[2] ?? '{}') as DeepPartialYaml;
const server = await startTestServer(overrides);
process.stdout.write(`READY ${server.url}\n`);
process.on('SIGTERM', () => {
  void server.stop().then(() => process.exit(0));
});
