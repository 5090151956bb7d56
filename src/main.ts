/** Entry point of `npm start`: configuration from the environment, graceful stop on signals. */
import { ConfigError, loadConfig } from './config.js';
import { log, setLogLevel } from './log.js';
import { start, StartupError } from './start.js';

async function main(): Promise<void> {
  const config = loadConfig();
  setLogLevel(config.logLevel);
  const service = await start(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    service.stop().then(
      () => process.exit(0),
      (err) => {
        log.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof StartupError) {
    log.error(err.message);
    process.exit(2);
  }
  log.error('fatal', { error: String(err?.stack ?? err) });
  process.exit(1);
});
