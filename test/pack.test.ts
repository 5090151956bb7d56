/**
 * The client as a user gets it: `npm pack` of this package, installed from the tarball into an
 * empty folder (without install scripts: the client needs no native module), its `wires` and
 * `wires-mcp` bins run from that folder's node_modules/.bin against a live service, and the
 * module imported by its package name. A file the client imports but `files` leaves out of
 * the tarball fails here.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TOOLS } from '../src/mcp/tools.js';
import { startTestService, type TestService } from './helpers/service.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string };
const NPM_TIMEOUT_MS = 120_000;

/**
 * The environment for npm and the bins: without what an enclosing `npm test` exports
 * (npm_config_local_prefix would send the install into this checkout), keeping the settings
 * that say where the registry and cache are.
 */
const KEEP = /^npm_config_(cache|registry|cafile|ca|userconfig|globalconfig|proxy|https_proxy|noproxy|strict_ssl|fetch_.*|@.*:registry)$/i;
const cleanEnv = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) || KEEP.test(k)));

function run(cmd: string, args: string[], cwd: string, timeout = NPM_TIMEOUT_MS, env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr: stderr + (err && code === null ? `\n${err.message}` : '') });
    });
  });
}

let tmp: string;
let app: string;
let packed: { filename: string; files: { path: string }[] };
let svc: TestService;
const bin = (name: string) => join(app, 'node_modules', '.bin', name);

before(
  async () => {
    tmp = mkdtempSync(join(tmpdir(), 'wires-pack-'));
    const out = join(tmp, 'pack');
    app = join(tmp, 'app');
    mkdirSync(out);
    mkdirSync(app);
    const pack = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], ROOT);
    assert.equal(pack.code, 0, pack.stderr);
    packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'wires-pack-test', private: true }));
    const install = await run('npm', ['install', '--prefix', app, '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--no-update-notifier', join(out, packed.filename)], app);
    assert.equal(install.code, 0, install.stderr);
    svc = await startTestService();
  },
  { timeout: 2 * NPM_TIMEOUT_MS + 30_000 },
);

after(async () => {
  await svc?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('packed client', { timeout: 60_000 }, () => {
  test('the tarball is the scoped package and holds only built client files and the README', () => {
    assert.match(PKG.name, /^@[a-z0-9-]+\//, 'a scoped name, so its bins never resolve to another registry package');
    const paths = packed.files.map((f) => f.path);
    assert.ok(paths.includes('dist/src/client/cli.js') && paths.includes('dist/src/client/mcp-stdio.js') && paths.includes('README.md'));
    for (const p of paths) {
      assert.ok(p === 'package.json' || p === 'README.md' || /^dist\/src\/.+\.(js|d\.ts)$/.test(p), `unexpected file in the tarball: ${p}`);
      // The payment module the client needs is its signing types, free of the server's crypto.
      if (p.startsWith('dist/src/pay/')) assert.match(p, /^dist\/src\/pay\/transfer-types\./, `a server file in the tarball: ${p}`);
      // Of the search, only the tokeniser the parameter check uses.
      if (p.startsWith('dist/src/search/')) assert.match(p, /^dist\/src\/search\/tokenize\./, `a server file in the tarball: ${p}`);
      // Of the stream, only the close codes the client kit names its errors by.
      if (p.startsWith('dist/src/stream/')) assert.match(p, /^dist\/src\/stream\/close-codes\./, `a server file in the tarball: ${p}`);
      assert.doesNotMatch(p, /^dist\/src\/(devnet|demo|ingest|http\/(server|uws))/, `a server file in the tarball: ${p}`);
    }
  });

  test('wires --help exits 0 with the usage on stdout', async () => {
    const r = await run(bin('wires'), ['--help'], app, 20_000);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^usage: wires <wire>/);
    assert.equal(r.stderr, '');
  });

  test('wires without a key shows the preview, with the asked limit', async () => {
    const r = await run(bin('wires'), ['cve', '--src', 'cisa', '--limit', '2', '--json'], app, 20_000, { ...cleanEnv(), WIRES_URL: svc.base, WALLET_PRIVATE_KEY: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /no WALLET_PRIVATE_KEY: showing the free preview/);
    assert.equal(JSON.parse(r.stdout).articles.length, 2);
  });

  test('the module imports by its package name', async () => {
    const r = await run(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(PKG.name)}); console.log(typeof m.WiresClient, typeof m.WiresError);`], app, 20_000);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'function function');
  });

  test('wires-mcp over stdio lists the wire tools, and a paid tool without a key answers the preview with limit 2', async () => {
    const client = new Client({ name: 'pack-test', version: '1.0.0' });
    const env: Record<string, string> = { PATH: process.env.PATH!, WIRES_URL: svc.base };
    await client.connect(new StdioClientTransport({ command: bin('wires-mcp'), args: [], cwd: app, env, stderr: 'pipe' }), { timeout: 20_000 });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, [...TOOLS.map((t) => t.name), 'stream_poll'].sort(), 'the wire tools, and stream_poll');
      const texts = (r: Record<string, unknown>) => (r.content as { text: string }[]).map((c) => c.text);

      const preview = texts(await client.callTool({ name: 'edgar_preview', arguments: { limit: 2 } }));
      assert.equal(JSON.parse(preview[0]!).articles.length, 2);

      const fallback = texts(await client.callTool({ name: 'cve_latest', arguments: { limit: 2 } }));
      assert.match(fallback[0]!, /No WALLET_PRIVATE_KEY .* Showing the free preview/);
      assert.equal(JSON.parse(fallback[1]!).articles.length, 2);
    } finally {
      await client.close();
    }
  });
});
