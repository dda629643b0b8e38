// Part of the build: the web console's static files are not TypeScript, so tsc does not emit
// them; copy them next to the compiled console module (dist/console/static.js), which serves them.
import { cpSync } from 'node:fs';

cpSync(new URL('../src/console/public/', import.meta.url), new URL('../dist/console/public/', import.meta.url), { recursive: true });
