/**
 * The real entry point as an operator runs it: start-up checks, logging and graceful stop.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SOURCES } from '../src/catalog/index.js';
import { uwsBinaryName, uwsPackageDir } from '../src/http/uws.js';
import { glibcBelow238 } from './helpers/glibc.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));

interface Run {
  code: number | null;
  stderr: string;
}

/** Starts main.js; once it listens, runs `whileUp` and sends SIGTERM (SIGKILL after `limitMs`). */
function run(env: Record<string, string>, whileUp?: (port: number) => Promise<void>, limitMs = 15_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], {
      // INGEST=0 unless a test says otherwise: tests never poll the real sources.
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', INGEST: '0', DATA_DIR: mkdtempSync(join(tmpdir(), 'wires-main-')), ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let started = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /"msg":"listening".*?"port":(\d+)/.exec(stderr);
      if (m && !started) {
        started = true;
        (whileUp ?? (async () => {}))(Number(m[1])).then(
          () => child.kill('SIGTERM'),
          (err) => {
            child.kill('SIGKILL');
            reject(err);
          },
        );
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

test('starts on the native uWS binary for this Node, says which, serves, and stops on SIGTERM', async () => {
  const expected = uwsBinaryName();
  const sha256 = createHash('sha256')
    .update(readFileSync(join(uwsPackageDir(), expected)))
    .digest('hex');
  const result = await run({}, async (port) => {
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(res.status, 200);
    const { uws } = ((await res.json()) as any).server;
    assert.equal(uws.binary.startsWith(expected.slice(0, -'.node'.length)), true, `${uws.binary} is not the binary for Node ${process.version}`);
    assert.equal(uws.sha256, sha256);
    assert.equal(uws.glibc_compat, glibcBelow238(), 'the glibc 2.36 rewrite loads exactly where the release binary cannot');
    assert.equal(((await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as any).server.allocator, 'glibc');
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, new RegExp(`uWebSockets.js native binary loaded.*"sha256":"${sha256}"`));
  assert.match(result.stderr, /PAYMENTS DISABLED: PAY_TO_ADDRESS is not set/);
  assert.match(result.stderr, /shutting down.*SIGTERM/);
});

test('on the allocator the systemd units preload (jemalloc), it serves and /health says so', async () => {
  const preloads = ['wires.service', 'wires@.service'].map((unit) => /^Environment=LD_PRELOAD=(\S+)$/m.exec(readFileSync(join(DEPLOY, unit), 'utf8'))?.[1]);
  assert.equal(preloads[0], preloads[1], 'both units preload the same library');
  assert.ok(preloads[0], 'deploy/wires.service preloads an allocator');
  let said = '';
  const result = await run({ LD_PRELOAD: preloads[0]! }, async (port) => {
    said = ((await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as any).server.allocator;
    assert.equal((await fetch(`http://127.0.0.1:${port}/news/preview?q=rate`)).status, 200);
  });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(said, 'jemalloc');
  assert.doesNotMatch(result.stderr, /cannot be preloaded/, 'the library is installed (scripts/install-system-deps.sh)');
  assert.match(result.stderr, /"msg":"listening".*"allocator":"jemalloc"/);
});

test('live mode with no source reachable says so once and suggests the demo', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wires-main-'));
  const file = join(dir, 'sources.json');
  // Every source at a closed loopback port: what a machine without internet sees, quickly.
  writeFileSync(file, JSON.stringify(Object.fromEntries(SOURCES.map((s) => [s.id, 'http://127.0.0.1:9/']))));
  let status = '';
  const result = await run(
    { INGEST: '1', WIRES_SOURCES: file, FETCH_TIMEOUT_SEC: '2', POLL_INTERVAL_SEC: '1' },
    async (port) => {
      // Every source fails its first poll; with nothing succeeding for three intervals the
      // service must say the pipeline is down (an empty wire is then not "nothing happened").
      // The first round takes as long as the busiest host's budget allows: CNBC's six feeds
      // at one request a second, each fetch with its retries, take about 10 s.
      const deadline = Date.now() + 40_000;
      while (status !== 'down' && Date.now() < deadline) {
        const health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as any;
        if (health.sources.failing === SOURCES.length) status = health.status;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    45_000,
  );
  assert.equal(status, 'down');
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr.match(/no source was reachable.*npm run demo/g)?.length, 1, result.stderr);
});

test('a bad setting stops start-up with a clear message', async () => {
  const result = await run({ PORT: 'eighty' });
  assert.equal(result.code, 2);
  assert.match(result.stderr, /PORT must be an integer from 0 to 65535, got \\"eighty\\"/);
});

test('one instance per port and per DATA_DIR: a second start refuses with a clear message (exit 2) and the first keeps serving', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wires-main-'));
  const result = await run({ DATA_DIR: dataDir }, async (port) => {
    const samePort = await run({ PORT: String(port) });
    assert.equal(samePort.code, 2, samePort.stderr);
    assert.match(samePort.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
    const sameDir = await run({ DATA_DIR: dataDir });
    assert.equal(sameDir.code, 2, sameDir.stderr);
    assert.match(sameDir.stderr, /DATA_DIR is in use by the service with pid \d+/);
    // Every request still reaches the first instance (a shared port would split them).
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
  });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(existsSync(join(dataDir, 'lock')), false, 'the lock is released at stop');
});

test('a lock left by a service that is gone is taken over', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wires-main-'));
  // A pid that runs, but with another start time: the pid of a crashed service, reused.
  writeFileSync(join(dataDir, 'lock'), JSON.stringify({ pid: process.pid, started: 1 }));
  const result = await run({ DATA_DIR: dataDir }, async (port) => {
    assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /taking over the lock of a service that is gone/);
});
