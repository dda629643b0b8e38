// Stand-alone entry for the admin CLI (`node --import tsx src/cli/admin-main.ts <command> ...`);
// `patchbay <command>` through src/main.ts runs the same function.
import { runAdminCommand } from './admin.ts';

process.exitCode = await runAdminCommand(process.argv.slice(2));
