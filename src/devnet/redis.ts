/**
 * A local `redis-server` (Debian's, installed by scripts/install-system-deps.sh) for the
 * replica demo, the tests and bench:cluster. It runs the shipped deploy/redis/redis.conf and
 * users.acl as they are (persistence, noeviction, the `wires` ACL user, with a password made
 * here), with only its port, data dir and file paths changed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../free-port.js';

/** deploy/redis, from src/devnet or dist/src/devnet. */
function deployDir(): string {
  for (const up of ['../../deploy/redis/', '../../../deploy/redis/']) {
    const dir = fileURLToPath(new URL(up, import.meta.url));
    try {
      readFileSync(join(dir, 'redis.conf'));
      return dir;
    } catch {}
  }
  throw new Error('deploy/redis/redis.conf not found');
}

export interface LocalRedis {
  url: string;
  port: number;
  dir: string;
  /** The running server's process id (undefined while stopped). */
  readonly pid: number | undefined;
  /** Sends a signal (SIGKILL: a crash; SIGSTOP: a hang) and waits for the exit unless it stops. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data dir (after a kill). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(opts: { dir?: string; port?: number; appendfsync?: 'always' | 'everysec' } = {}): Promise<LocalRedis> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'wires-redis-'));
  const port = opts.port ?? (await freePort());
  const shipped = deployDir();
  const password = randomBytes(16).toString('hex');
  const acl = join(dir, 'users.acl');
  writeFileSync(acl, readFileSync(join(shipped, 'users.acl'), 'utf8').replace('CHANGE-THIS-PASSWORD', password).replace('CHANGE-THIS-ADMIN-PASSWORD', randomBytes(16).toString('hex')), {
    mode: 0o600,
  });
  let child: ChildProcess | null = null;
  const start = async () => {
    const overrides = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--aclfile', acl, ...(opts.appendfsync ? ['--appendfsync', opts.appendfsync] : [])];
    child = spawn('redis-server', [join(shipped, 'redis.conf'), ...overrides], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output = (output + d).slice(-4000)));
    const deadline = Date.now() + 10_000;
    while (!(await answers(port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on ${port}: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    if (signal === 'SIGSTOP' || signal === 'SIGCONT') {
      c.kill(signal);
      return;
    }
    const exited = new Promise((r) => c.once('exit', r));
    c.kill(signal);
    await exited;
  };
  await start();
  return {
    url: `redis://wires:${password}@127.0.0.1:${port}`,
    port,
    dir,
    get pid() {
      return (child as ChildProcess | null)?.pid;
    },
    kill,
    start,
    stop: () => kill('SIGTERM'),
  };
}

/** Does a Redis answer PING on this port? */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      socket.destroy();
      // Every user has a password: an answer that asks for authentication means it is up.
      resolve(/^(\+PONG|-NOAUTH)/.test(d.toString()));
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
