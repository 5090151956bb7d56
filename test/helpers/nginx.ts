/**
 * A real nginx running the shipped deploy/nginx/wires-maps.conf and wires-proxy.conf as they
 * are, with only its port, temporary paths and the upstream's servers given here.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEPLOY = fileURLToPath(new URL('../../../deploy/nginx/', import.meta.url));
export const NGINX = [process.env.NGINX_BIN, '/usr/sbin/nginx', '/usr/bin/nginx'].find((p): p is string => !!p && existsSync(p));

export interface Nginx {
  dir: string;
  url: string;
  /** The last lines of nginx's error log (level info: it says why it closed a connection). */
  errorLog(lines?: number): string;
  stop(): Promise<void>;
}

/**
 * nginx on `port` in front of `upstream`: the body of the `upstream wires` block (its `server`
 * lines, or a shipped file's whole block body). Keepalive settings are added when it has none.
 * One worker unless `workers` says more (bench:scale-out gives it the cores left to the front).
 */
export async function startNginx(port: number, upstream: string, workers = 1): Promise<Nginx> {
  const base = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), 'wires-nginx-'));
  // nginx run as root serves from unprivileged workers, which need to reach the temp paths.
  chmodSync(dir, 0o755);
  const q = (p: string) => JSON.stringify(p);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes ${workers};
pid ${q(join(dir, 'nginx.pid'))};
error_log ${q(join(dir, 'error.log'))} info;
events { worker_connections 256; }
http {
    access_log ${q(join(dir, 'access.log'))};
    client_body_temp_path ${q(join(dir, 'client_body'))};
    proxy_temp_path ${q(join(dir, 'proxy'))};
    fastcgi_temp_path ${q(join(dir, 'fastcgi'))};
    uwsgi_temp_path ${q(join(dir, 'uwsgi'))};
    scgi_temp_path ${q(join(dir, 'scgi'))};
    include ${q(join(DEPLOY, 'wires-maps.conf'))};
    upstream wires { ${upstream.includes('keepalive') ? upstream : `${upstream} keepalive 32; keepalive_timeout 4s;`} }
    server {
        listen 127.0.0.1:${port};
        include ${q(join(DEPLOY, 'wires-proxy.conf'))};
    }
}
`,
  );
  let stderr = '';
  const nginx: ChildProcess = spawn(NGINX!, ['-p', dir + '/', '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  nginx.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise((resolve) => nginx.once('exit', resolve));
  const stop = async () => {
    if (nginx.exitCode === null && nginx.signalCode === null) {
      nginx.kill('SIGTERM');
      const stopped = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 3000))]);
      if (stopped === 'timeout') nginx.kill('SIGKILL');
    }
    // Workers of a killed master exit on their own; make sure none outlives the test.
    if (existsSync(join(dir, 'nginx.pid'))) {
      try {
        process.kill(Number(readFileSync(join(dir, 'nginx.pid'), 'utf8')), 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const errorLog = (lines = 20) => {
    const path = join(dir, 'error.log');
    return existsSync(path) ? readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '';
  };
  // Ready when the port answers; fail fast when nginx exits (a config error).
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (nginx.exitCode !== null || nginx.signalCode !== null) {
      const log = errorLog(Number.POSITIVE_INFINITY);
      await stop();
      assert.fail(`nginx exited (${nginx.exitCode ?? nginx.signalCode}): ${stderr}\n${log}`);
    }
    const up = await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) return { dir, url: base, stop, errorLog };
    if (Date.now() > deadline) {
      await stop();
      assert.fail(`nginx did not come up on ${base}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
