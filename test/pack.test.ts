/**
 * The client package as a bot author gets it: packages/client assembled from the compiled
 * tree (scripts/build-client.ts), `npm pack`ed, and installed from the tarball alone into an
 * empty folder, its dependencies from the registry (without install scripts: it needs no
 * native module). From that folder: the footprint is measured, the `wires` CLI pays on the
 * devnet, the module imported by its name follows a stream, and `wires-mcp` pays a tool call.
 * A file the client imports but the package leaves out fails here.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { buildClient, CLIENT_DIR } from '../scripts/build-client.js';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { TOOLS } from '../src/mcp/tools.js';
import { ChainReader } from '../src/pay/chain.js';
import { startTestService, type TestService } from './helpers/service.js';

const PKG = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string> };
const NPM_TIMEOUT_MS = 120_000;
/** The footprint a small client is held to: the service's own package installed about 150. */
const MAX_PACKAGES = 25;
const MAX_BYTES = 10 * 1024 * 1024;

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

/** Installed packages (each folder with a package.json under node_modules, nested ones too) and their bytes. */
function footprint(nodeModules: string): { packages: string[]; bytes: number } {
  const packages: string[] = [];
  let bytes = 0;
  const walk = (dir: string, inModules: boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (inModules && !entry.name.startsWith('.') && !entry.name.startsWith('@')) packages.push(path.slice(nodeModules.length + 1));
        walk(path, entry.name === 'node_modules' || (inModules && entry.name.startsWith('@')));
      } else bytes += lstatSync(path).size;
    }
  };
  walk(nodeModules, true);
  return { packages, bytes };
}

let tmp: string;
let app: string;
let packed: { filename: string; files: { path: string }[] };
let built: string[];
let devnet: Devnet;
let svc: TestService;
let chain: ChainReader;
const bin = (name: string) => join(app, 'node_modules', '.bin', name);

before(
  async () => {
    built = buildClient();
    tmp = mkdtempSync(join(tmpdir(), 'wires-pack-'));
    const out = join(tmp, 'pack');
    app = join(tmp, 'app');
    mkdirSync(out);
    mkdirSync(app);
    const pack = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], CLIENT_DIR);
    assert.equal(pack.code, 0, pack.stderr);
    packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'wires-pack-test', private: true, type: 'module' }));
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--no-update-notifier', join(out, packed.filename)], app);
    assert.equal(install.code, 0, install.stderr);
    devnet = await startDevnet({ payers: 2 });
    svc = await startTestService({ PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl });
    chain = new ChainReader(devnet.rpcUrl, 10_000);
  },
  { timeout: 2 * NPM_TIMEOUT_MS + 60_000 },
);

after(async () => {
  await svc?.stop();
  await devnet?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the packed client', { timeout: 90_000 }, () => {
  test('the tarball holds exactly the files the client reaches, its package.json and README', () => {
    assert.equal(PKG.name, '@wires-service/client');
    const paths = packed.files.map((f) => f.path).sort();
    assert.deepEqual(paths, ['README.md', ...built.map((f) => `dist/${f}`), 'package.json'].sort());
    for (const p of paths) assert.doesNotMatch(p, /^dist\/(devnet|demo|ingest|http|search|pay\/(?!transfer-digest))/, `a server file in the tarball: ${p}`);
  });

  test(`installed alone it is at most ${MAX_PACKAGES} packages and ${MAX_BYTES / 1048576} MB`, (t) => {
    const { packages, bytes } = footprint(join(app, 'node_modules'));
    t.diagnostic(`${packages.length} packages, ${(bytes / 1048576).toFixed(2)} MB: ${packages.join(', ')}`);
    assert.ok(packages.includes(PKG.name), 'the client itself');
    for (const dep of Object.keys(PKG.dependencies)) assert.ok(packages.includes(dep), `${dep} installed`);
    assert.ok(packages.length <= MAX_PACKAGES, `${packages.length} packages`);
    assert.ok(bytes <= MAX_BYTES, `${bytes} bytes`);
  });

  test('wires --help exits 0 with the usage; without a key it shows the preview with the asked limit', async () => {
    const help = await run(bin('wires'), ['--help'], app, 20_000);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^usage: wires <wire>/);
    const r = await run(bin('wires'), ['cve', '--src', 'cisa', '--limit', '2', '--json'], app, 20_000, { ...cleanEnv(), WIRES_URL: svc.base, WALLET_PRIVATE_KEY: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /no WALLET_PRIVATE_KEY: showing the free preview/);
    assert.equal(JSON.parse(r.stdout).articles.length, 2);
  });

  test('wires with a devnet key pays once on chain and prints the data', async () => {
    const payer = devnet.payers[0]!;
    const before = await chain.balanceOf(payer.address);
    const r = await run(bin('wires'), ['edgar', '--form', '8-k', '--limit', '4', '--json'], app, 30_000, { ...cleanEnv(), WIRES_URL: svc.base, WALLET_PRIVATE_KEY: payer.privateKey });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /paid 0\.01 USD \(0x[0-9a-f]{64}\)/);
    assert.ok(JSON.parse(r.stdout).count >= 1);
    assert.equal((await chain.balanceOf(payer.address)) - before, -10_000n);
  });

  test('the module, imported by its name, pays a stream block on the devnet and receives a new item', async () => {
    const payer = devnet.payers[1]!;
    writeFileSync(
      join(app, 'stream.js'),
      `import { WiresClient } from ${JSON.stringify(PKG.name)};
const client = new WiresClient({ url: process.env.WIRES_URL, privateKey: process.env.WALLET_PRIVATE_KEY });
const stream = client.stream('news', { category: 'markets', q: 'packed' });
console.log(JSON.stringify({ ready: await stream.ready }));
for await (const it of stream) { console.log(JSON.stringify({ url: it.item.url, spent: client.spentUsd })); break; }
`,
    );
    const before = await chain.balanceOf(payer.address);
    const child = spawn(process.execPath, ['stream.js'], { cwd: app, env: { PATH: process.env.PATH, WIRES_URL: svc.base, WALLET_PRIVATE_KEY: payer.privateKey }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const ready = await lines.next();
      assert.equal(ready.done, false, stderr);
      assert.equal(JSON.parse(ready.value as string).ready, 'news?category=markets&q=packed');
      const url = `https://example.com/packed/${Date.now()}`;
      svc.wires.get('news')!.add([{ id: url, title: 'A packed client story', url, source: 'Example', filter: 'markets', published: Date.now(), summary: 'Pushed.' }]);
      const item = JSON.parse((await lines.next()).value as string) as { url: string; spent: number };
      assert.equal(item.url, url);
      assert.equal(await exited, 0, stderr);
      const paid = before - (await chain.balanceOf(payer.address));
      assert.equal(BigInt(Math.round(item.spent * 1e6)), paid, 'the block the client counted is what left the wallet on chain');
      assert.ok(paid > 0n);
    } finally {
      child.kill();
    }
  });

  test('wires-mcp over stdio lists the tools and pays a paid tool on the devnet', async () => {
    const payer = devnet.payers[0]!;
    const client = new Client({ name: 'pack-test', version: '1.0.0' });
    const env: Record<string, string> = { PATH: process.env.PATH!, WIRES_URL: svc.base, WALLET_PRIVATE_KEY: payer.privateKey };
    await client.connect(new StdioClientTransport({ command: bin('wires-mcp'), args: [], cwd: app, env, stderr: 'pipe' }), { timeout: 20_000 });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, [...TOOLS.map((t) => t.name), 'stream_poll'].sort(), 'the wire tools, and stream_poll');
      const before = await chain.balanceOf(payer.address);
      const paid = await client.callTool({ name: 'cve_latest', arguments: { limit: 2 } });
      const texts = (paid.content as { text: string }[]).map((c) => c.text);
      assert.equal(JSON.parse(texts[0]!).articles.length, 2);
      assert.match(texts[1]!, /^Paid 0\.005 USD \(0x[0-9a-f]{64}\)/);
      assert.equal((await chain.balanceOf(payer.address)) - before, -5_000n);
    } finally {
      await client.close();
    }
  });
});
