/**
 * The native HTTP layer loads on this runtime: the release binary for this Node ABI where the
 * machine's glibc takes it, its glibc 2.36 rewrite where it does not (Debian 12), and a clear
 * refusal where neither can. `.ci/run` runs this file on Node 20, 22 and 24.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { glibcCompat, GlibcCompatError } from '../src/http/glibc-compat.js';
import { loadUws, UwsLoadError, uwsBinaryName, uwsPackageDir } from '../src/http/uws.js';
import { glibcBelow238 } from './helpers/glibc.js';

const UWS_MODULE = fileURLToPath(new URL('../src/http/uws.js', import.meta.url));
const NAME = uwsBinaryName();
const RELEASE = readFileSync(join(uwsPackageDir(), NAME));
const linuxBinaries = readdirSync(uwsPackageDir()).filter((f) => /^uws_linux_(x64|arm64)_\d+\.node$/.test(f));

/** A copy of the package (its package.json and this runtime's binary) in a folder of its own. */
function packageCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wires-uws-'));
  copyFileSync(join(uwsPackageDir(), 'package.json'), join(dir, 'package.json'));
  copyFileSync(join(uwsPackageDir(), NAME), join(dir, NAME));
  return dir;
}

/**
 * Loads uWS from `dir` in a fresh Node with every symbol bound at load (LD_BIND_NOW), serves one
 * request on loopback, and prints what loadUws reported and what came back.
 */
function loadAndServe(dir: string): { status: number | null; out: { binary: string; sha256: string; glibcCompat: boolean; body: string } | null; stderr: string } {
  const script = `
    const { loadUws } = await import(${JSON.stringify(UWS_MODULE)});
    const u = loadUws({ dir: ${JSON.stringify(dir)}, cacheDir: ${JSON.stringify(join(dir, 'cache'))} });
    u.uws.App().get('/*', (res) => res.end('served by ' + process.version)).listen('127.0.0.1', 0, async (s) => {
      const port = u.uws.us_socket_local_port(s);
      const body = await (await fetch('http://127.0.0.1:' + port + '/')).text();
      console.log(JSON.stringify({ binary: u.binary, sha256: u.sha256, glibcCompat: u.glibcCompat, body }));
      process.exit(0);
    });`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, LD_BIND_NOW: '1' }, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, out: r.status === 0 ? JSON.parse(r.stdout) : null, stderr: r.stderr };
}

describe('uWebSockets.js on this runtime', () => {
  test(`the binary for Node ${process.version} loads, binds every symbol, and serves`, () => {
    const dir = packageCopy();
    const { status, out, stderr } = loadAndServe(dir);
    assert.equal(status, 0, stderr);
    assert.equal(out!.body, `served by ${process.version}`);
    assert.equal(out!.glibcCompat, glibcBelow238());
    assert.equal(out!.binary.endsWith(glibcBelow238() ? '.glibc-2.36.node' : NAME), true, out!.binary);
  });

  test('on glibc older than 2.38 the release binary itself is refused by the loader, for GLIBC_2.38', { skip: !glibcBelow238() && 'this glibc loads the release binary' }, () => {
    const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(join(uwsPackageDir(), NAME))})`], { encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /version `GLIBC_2\.38' not found/);
  });

  test('a tampered or stale rewrite in the cache is replaced before it is loaded', { skip: !glibcBelow238() && 'no rewrite on this glibc' }, () => {
    const dir = packageCopy();
    assert.equal(loadAndServe(dir).status, 0);
    const cacheDir = join(dir, 'cache');
    // The rewrite, not its record beside it.
    const [cached] = readdirSync(cacheDir).filter((f) => f.endsWith('.node'));
    const file = join(cacheDir, cached!);
    const good = readFileSync(file);
    writeFileSync(file, Buffer.concat([good.subarray(0, 4096), Buffer.alloc(64, 0xcc), good.subarray(4160)]));
    const again = loadAndServe(dir);
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(readFileSync(file), good);
  });

  test('a start that finds the release binary and its rewrite as a start recorded them reads neither', { skip: !glibcBelow238() && 'no rewrite on this glibc' }, () => {
    const dir = packageCopy();
    const first = loadAndServe(dir);
    assert.equal(first.status, 0, first.stderr);
    assert.equal(first.out!.sha256, createHash('sha256').update(RELEASE).digest('hex'));
    const cacheDir = join(dir, 'cache');
    const recordFile = join(cacheDir, `${NAME}.json`);
    const record = JSON.parse(readFileSync(recordFile, 'utf8')) as { sha256: string; rewrite: Record<string, number> };
    // The record made to name another checksum (its rewrite renamed to match): a start that
    // reports it has taken the record's word, without reading and hashing the release binary.
    const other = 'ab'.repeat(32);
    const renamed = first.out!.binary.replace(`.${record.sha256.slice(0, 16)}.`, `.${other.slice(0, 16)}.`);
    renameSync(first.out!.binary, renamed);
    const { dev, ino, size, mtimeMs, ctimeMs } = statSync(renamed);
    writeFileSync(recordFile, JSON.stringify({ ...record, sha256: other, rewrite: { dev, ino, size, mtimeMs, ctimeMs } }));
    const recorded = loadAndServe(dir);
    assert.equal(recorded.status, 0, recorded.stderr);
    assert.deepEqual([recorded.out!.sha256, recorded.out!.binary], [other, renamed]);
    // The release binary changed since (here only its time): checked, rewritten and recorded anew.
    utimesSync(join(dir, NAME), new Date(), new Date());
    const checked = loadAndServe(dir);
    assert.equal(checked.status, 0, checked.stderr);
    assert.deepEqual([checked.out!.sha256, checked.out!.binary], [first.out!.sha256, first.out!.binary]);
    assert.equal((JSON.parse(readFileSync(recordFile, 'utf8')) as { sha256: string }).sha256, first.out!.sha256);
  });

  test('a Node ABI without a binary, or a binary that is not one, is refused with the reason', () => {
    const missing = packageCopy();
    renameSync(join(missing, NAME), join(missing, NAME.replace(/_\d+\.node$/, '_999.node')));
    assert.throws(
      () => loadUws({ dir: missing, cacheDir: join(missing, 'cache') }),
      (err: Error) => {
        assert.ok(err instanceof UwsLoadError);
        assert.ok(err.message.includes(`no binary for Node ${process.version} (ABI ${process.versions.modules})`), err.message);
        assert.match(err.message, /it has ABI 999 there/);
        assert.match(err.message, /Node 20, 22 or 24/);
        return true;
      },
    );
    const broken = packageCopy();
    writeFileSync(join(broken, NAME), 'not a shared object');
    assert.throws(
      () => loadUws({ dir: broken, cacheDir: join(broken, 'cache') }),
      (err: Error) => err instanceof UwsLoadError && err.message.includes(`${NAME} did not load`),
    );
    if (glibcBelow238()) {
      // Where the service cannot write (deploy/wires.service), the rewrite must come from the build.
      const readOnly = packageCopy();
      assert.throws(
        () => loadUws({ dir: readOnly, cacheDir: join(readOnly, NAME, 'cache') }),
        (err: Error) => err instanceof UwsLoadError && /cannot write the glibc 2\.36 rewrite .*npm run build/.test(err.message),
      );
    }
  });
});

describe('the glibc 2.36 rewrite', () => {
  for (const name of linuxBinaries) {
    test(`${name}: only the C23 parsers are rebound, and nothing newer than glibc 2.36 is left`, () => {
      const release = readFileSync(join(uwsPackageDir(), name));
      const { patched, rebound } = glibcCompat(release);
      assert.ok(patched, `${name} needs nothing newer than glibc 2.36`);
      assert.ok(rebound.includes('__isoc23_strtol -> strtol'), rebound.join(', '));
      for (const r of rebound) assert.match(r, /^__isoc23_(strtou?l|sscanf) -> (strtou?l|__isoc99_sscanf)$/);
      assert.equal(patched.length, release.length);
      let changed = 0;
      for (let i = 0; i < release.length; i++) if (release[i] !== patched[i]) changed++;
      assert.ok(changed > 0 && changed <= 24, `${changed} bytes changed`);
      assert.deepEqual(glibcCompat(patched), { patched: null, rebound: [] });
    });
  }

  test('a binary that needs another glibc 2.38 function is refused, the function named', () => {
    const at = RELEASE.indexOf('__isoc23_strtoul\0', 0, 'latin1');
    assert.ok(at > 0);
    const other = Buffer.from(RELEASE);
    other.write('__isoc23_strfoul', at, 'latin1');
    assert.throws(
      () => glibcCompat(other),
      (err: Error) => err instanceof GlibcCompatError && /__isoc23_strfoul@GLIBC_2\.38 has no classic twin/.test(err.message),
    );
  });

  test('what is not a 64-bit ELF file is refused', () => {
    assert.throws(() => glibcCompat(Buffer.from('#!/bin/sh\n')), GlibcCompatError);
    const elf32 = Buffer.from(RELEASE.subarray(0, 64));
    elf32[4] = 1;
    assert.throws(() => glibcCompat(elf32), /64-bit little-endian/);
  });
});
