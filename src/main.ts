// Command-line entry point: `patchbay [--config path]`. Exit code 2 means a bad configuration.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type PatchbayConfig } from './config/config.ts';
import { startServer } from './server.ts';

function readConfig(): PatchbayConfig {
  const { values } = parseArgs({ options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write('usage: patchbay [--config file.yaml]\nWith no file, embedded defaults are used (see docs/configuration.md).\n');
    process.exit(0);
  }
  return loadConfig({ path: values.config });
}

async function main(): Promise<void> {
  let config: PatchbayConfig;
  try {
    config = readConfig();
  } catch (err) {
    if (err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`patchbay: ${(err as Error).message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const server = await startServer(config);
  const log = server.log;
  if (config.usingDefaultPassword) {
    log.warn('the ARI user "asterisk" still has the embedded default password "asterisk"; set ari.users in a config file before exposing this server beyond loopback');
  }
  log.info({ url: `${server.url}/ari`, serverId: config.serverId, config: config.configFile ?? '(embedded defaults)' }, 'Patchbay is listening');
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Last resort: a defect reached from one request must not end every call on the server.
  process.on('uncaughtException', (err) => log.fatal({ err }, 'uncaught exception; the server goes on'));
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled promise rejection; the server goes on'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`patchbay: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
