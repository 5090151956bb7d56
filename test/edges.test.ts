/**
 * The edges a hostile or careless client reaches: request bodies where none is taken (closed
 * unread, not read to the end), methods the service does not serve, and what the service and
 * the devnet leave on disk and in the process table.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTestService, type TestService } from './helpers/service.js';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

interface RawAnswer {
  /** Everything the server sent. */
  text: string;
  /** Request bytes the client had written when the server closed the connection. */
  sent: number;
  closed: boolean;
}

/**
 * Writes `head`, then streams up to `bodyBytes` of body in 64 KiB chunks while reading the
 * answer; stops at close or after `ms`.
 */
function raw(port: number, head: string, bodyBytes = 0, ms = 5000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let sent = 0;
    let closed = false;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, sent, closed });
    };
    const timer = setTimeout(finish, ms);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('connect', () => {
      socket.write(head);
      const pump = () => {
        while (!socket.destroyed && sent < bodyBytes) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  });
}

function status(text: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
}
function jsonBody(text: string): any {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
}

describe('request bodies', () => {
  const FIFTY_MB = 50 * 1024 * 1024;

  test('a GET announcing 50 MB is refused with 413 and the connection closed, without reading the body', async () => {
    const r = await raw(svc.port, `GET /cve/preview HTTP/1.1\r\nHost: x\r\nContent-Length: ${FIFTY_MB}\r\n\r\n`, FIFTY_MB);
    assert.equal(status(r.text), 413);
    assert.match(r.text, /\r\nConnection: close\r\n/i);
    assert.equal(jsonBody(r.text).error.code, 'body_too_large');
    assert.ok(r.closed, 'the server closed the connection');
    assert.ok(r.sent < FIFTY_MB / 2, `closed after ${r.sent} bytes, not at the end of the body`);
  });

  test('a chunked GET body, and a body with HEAD or OPTIONS, get the same', async () => {
    for (const head of [
      'GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
      'HEAD /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello',
      'OPTIONS /news HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello',
    ]) {
      const r = await raw(svc.port, head);
      assert.equal(status(r.text), 413, head.split('\r\n')[0]);
      assert.ok(r.closed, head.split('\r\n')[0]);
    }
  });

  test('PUT, PATCH, DELETE or POST with a body on a GET route: 405 with Allow, closed', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST']) {
      const r = await raw(svc.port, `${method} /cve/preview HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n{}{}`);
      assert.equal(status(r.text), 405, method);
      assert.match(r.text, /\r\nAllow: GET, HEAD, OPTIONS\r\n/i, method);
      assert.equal(jsonBody(r.text).error.code, 'method_not_allowed', method);
      assert.ok(r.closed, method);
    }
  });

  test('a GET with Content-Length: 0 is an ordinary GET on a kept-alive connection', async () => {
    const r = await raw(svc.port, 'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n', 0, 500);
    assert.equal(status(r.text), 200);
    assert.equal(r.closed, false);
  });

  test('POST /mcp announcing 50 MB: 413 at once, closed unread', async () => {
    const r = await raw(svc.port, `POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${FIFTY_MB}\r\n\r\n`, FIFTY_MB);
    assert.equal(status(r.text), 413);
    assert.equal(jsonBody(r.text).error.code, -32600);
    assert.ok(r.closed);
    assert.ok(r.sent < FIFTY_MB / 2, `closed after ${r.sent} bytes`);
  });

  test('POST /mcp with a chunked body that grows past the cap: 413 once the cap is passed, closed', async () => {
    const size = 8 * 1024 * 1024;
    const hex = size.toString(16);
    const r = await raw(svc.port, `POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${hex}\r\n`, size);
    assert.equal(status(r.text), 413);
    assert.ok(r.closed);
    assert.ok(r.sent < size, `closed after ${r.sent} of ${size} bytes`);
  });
});

describe('methods', () => {
  test('methods this build passes to the service (PUT, PATCH, DELETE, POST, CONNECT-less others) answer 405 with Allow', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST', 'TRACE']) {
      const r = await raw(svc.port, `${method} /health HTTP/1.1\r\nHost: x\r\n\r\n`, 0, 1000);
      assert.equal(status(r.text), 405, method);
      assert.match(r.text, /\r\nAllow: GET, HEAD, OPTIONS\r\n/i, method);
      assert.equal(jsonBody(r.text).error.code, 'method_not_allowed');
    }
  });
});

describe('private files', () => {
  test('with a permissive umask, the data folder is 0700 and the journal and snapshots 0600; a wider file left by someone is narrowed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wires-modes-'));
    // A journal folder and file someone created world-readable before the service ran.
    const journalDir = join(dataDir, 'journal');
    const old = process.umask(0);
    let s: TestService | undefined;
    try {
      await import('node:fs').then((fs) => fs.mkdirSync(journalDir, { mode: 0o755 }));
      writeFileSync(join(journalDir, 'payments.jsonl'), '', { mode: 0o644 });
      s = await startTestService({ DATA_DIR: dataDir });
      await s.stop(); // writes the snapshots
      s = undefined;
    } finally {
      process.umask(old);
      await s?.stop();
    }
    const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
    assert.equal(mode(dataDir), '700');
    assert.equal(mode(journalDir), '700');
    assert.equal(mode(join(journalDir, 'payments.jsonl')), '600');
    const archived = readdirSync(join(journalDir, 'journal-archive'));
    assert.ok(archived.length >= 1);
    assert.equal(mode(join(journalDir, 'journal-archive')), '700');
    const snapshots = readdirSync(join(dataDir, 'snapshots'));
    assert.ok(snapshots.length > 0, 'snapshots were written');
    assert.equal(mode(join(dataDir, 'snapshots')), '700');
    for (const f of snapshots) assert.equal(mode(join(dataDir, 'snapshots', f)), '600', f);
  });
});

describe('devnet lifetime', () => {
  const MAIN = fileURLToPath(new URL('../src/devnet/main.js', import.meta.url));

  function startDevnetProcess(file: string) {
    const child = spawn(process.execPath, [MAIN], { env: { ...process.env, DEVNET_FILE: file, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    return { child, exited, output: () => output };
  }

  async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await fn())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const answers = (url: string) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', signal: AbortSignal.timeout(1000) }).then(
      () => true,
      () => false,
    );

  test('SIGKILL of the devnet process takes anvil with it; the next start reclaims the stale file; a live owner keeps it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'wires-devnet-')), 'devnet.json');
    const first = startDevnetProcess(file);
    await until('devnet.json', () => existsSync(file) && readFileSync(file, 'utf8').endsWith('\n'));
    assert.equal((statSync(file).mode & 0o777).toString(8), '600');
    const info = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(info.owner.pid, first.child.pid);
    assert.ok(await answers(info.rpcUrl), 'anvil answers');

    first.child.kill('SIGKILL');
    await first.exited;
    await until('anvil to stop after its parent was killed', async () => !(await answers(info.rpcUrl)), 10_000);
    assert.ok(existsSync(file), 'a SIGKILLed run leaves its file behind');

    const second = startDevnetProcess(file);
    try {
      // The new devnet deletes the stale file before writing its own: it may vanish between two reads.
      const owner = () => {
        try {
          return JSON.parse(readFileSync(file, 'utf8')).owner?.pid;
        } catch {
          return undefined;
        }
      };
      await until('the new devnet.json', () => owner() === second.child.pid);
      assert.match(second.output(), /reclaiming a stale devnet file/);

      const third = startDevnetProcess(file);
      const code = await third.exited;
      assert.notEqual(code, 0);
      assert.match(third.output(), new RegExp(`belongs to a running devnet \\(pid ${second.child.pid}\\)`));
      assert.equal(JSON.parse(readFileSync(file, 'utf8')).owner.pid, second.child.pid, 'the live owner keeps its file');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    assert.equal(existsSync(file), false, 'a clean stop removes the file');
  });
});
