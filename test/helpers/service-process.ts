/**
 * The service as a process of its own, for tests that change what only a process has: its
 * clock (libfaketime), its file-descriptor limit. Configured from the environment as
 * `npm start` is, plus STREAM_BLOCK_MS for short paid stream blocks. Prints {"port":N} on
 * stdout once it listens; stops on SIGTERM.
 */
import { loadConfig } from '../../src/config.js';
import { setLogLevel } from '../../src/log.js';
import { startService } from '../../src/service.js';

const config = loadConfig();
setLogLevel(config.logLevel);
const blockMs = Number(process.env.STREAM_BLOCK_MS ?? 0);
const service = await startService(config, blockMs > 0 ? { streamTiming: { blockMs, renewNoticeMs: Math.floor(blockMs / 2), firstPaymentMs: 30_000 } } : {});
process.stdout.write(`${JSON.stringify({ port: service.port })}\n`);
process.on('SIGTERM', () => {
  service.stop().then(() => process.exit(0));
});
