/**
 * Loads the uWebSockets.js native binary for this platform and Node ABI, and says which file
 * it was.
 *
 * The package (DESIGN decision 1; docs/deployment.md, "Runtime") ships one binary per platform, arch and
 * Node ABI, linked against glibc 2.38. On an older glibc (Debian 12 has 2.36) the loader
 * refuses it; we then load a copy rebound to the classic C parsers (glibc-compat.ts), written
 * by `npm run build` (or the first start) beside the compiled code, in dist/uws-glibc-2.36/,
 * where `npm ci` does not remove it, and checked against a fresh rewrite. With it goes a record
 * of the two files (`RewriteRecord`): a start that finds both as recorded loads the rewrite
 * without reading either (reading, hashing and rewriting 7 MB took 0.13 s of every start);
 * any other start checks and rewrites as before, and records again.
 * There is no slow fallback: without a binary for this runtime, the service does not start.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { basename, dirname, join } from 'node:path';
import type * as UWS from 'uWebSockets.js';
import { glibcCompat } from './glibc-compat.js';

const require = createRequire(import.meta.url);

export interface LoadedUws {
  uws: typeof UWS;
  /** The uWebSockets.js release, from its package. */
  version: string;
  /** The file that was loaded. */
  binary: string;
  /** SHA-256 of the package's binary for this runtime (before any glibc rewrite). */
  sha256: string;
  /** Whether the binary loaded is the glibc 2.36 rewrite of the package's. */
  glibcCompat: boolean;
}

export class UwsLoadError extends Error {}

/** The package's folder: its main file is uws.js at the top. */
export function uwsPackageDir(): string {
  return dirname(require.resolve('uWebSockets.js'));
}

/** `uws_linux_x64_137.node` for the running Node. */
export function uwsBinaryName(): string {
  return `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
}

const NEEDS_NEWER_GLIBC = /version `GLIBC_2\.\d+' not found/;

export interface UwsOptions {
  /** uWS reads UWS_HTTP_MAX_HEADERS_SIZE once, when its binary loads (default 4096). */
  maxHeaderBytes?: number;
  /** The package's folder. */
  dir?: string;
  /** Where glibc rewrites are kept. */
  cacheDir?: string;
}

const DEFAULT_CACHE_DIR = fileURLToPath(new URL('../../uws-glibc-2.36/', import.meta.url));

export function loadUws({ maxHeaderBytes, dir = uwsPackageDir(), cacheDir = DEFAULT_CACHE_DIR }: UwsOptions = {}): LoadedUws {
  if (maxHeaderBytes !== undefined) process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(maxHeaderBytes);
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const name = uwsBinaryName();
  const loaded = (uws: unknown, binary: string, sha256: string, compat: boolean): LoadedUws => ({ uws: uws as typeof UWS, version, binary, sha256, glibcCompat: compat });
  // Recorded only where the release binary did not load: this machine's glibc is older.
  const known = process.platform === 'linux' ? recorded(cacheDir, dir, name) : null;
  if (known) {
    try {
      return loaded(require(known.file), known.file, known.sha256, true);
    } catch {
      // checked and written again below
    }
  }
  let original: Buffer;
  try {
    original = readFileSync(join(dir, name));
  } catch {
    const runtimes = readdirSync(dir)
      .filter((f) => f.startsWith(`uws_${process.platform}_${process.arch}_`) && f.endsWith('.node'))
      .map((f) => `ABI ${f.slice(f.lastIndexOf('_') + 1, -'.node'.length)}`);
    throw new UwsLoadError(
      `uWebSockets.js ${version} has no binary for Node ${process.version} (ABI ${process.versions.modules}) on ${process.platform}-${process.arch}` +
        (runtimes.length ? `; it has ${runtimes.join(', ')} there (Node 20 is 115, 22 is 127, 24 is 137)` : '; it has none for this platform') +
        '. Run the service on Node 20, 22 or 24 LTS.',
    );
  }
  const sha256 = createHash('sha256').update(original).digest('hex');
  try {
    return loaded(require(join(dir, name)), join(dir, name), sha256, false);
  } catch (err) {
    const message = (err as Error).message;
    if (process.platform !== 'linux' || !NEEDS_NEWER_GLIBC.test(message)) throw new UwsLoadError(`uWebSockets.js ${version}: ${name} did not load: ${message}`);
  }
  const compat = compatCopy(cacheDir, name, original, sha256);
  let uws: unknown;
  try {
    uws = require(compat);
  } catch (err) {
    throw new UwsLoadError(`uWebSockets.js ${version}: ${basename(compat)}, the glibc 2.36 rewrite of ${name}, did not load: ${(err as Error).message}`);
  }
  record(cacheDir, name, { release: identity(join(dir, name)), sha256, rewrite: identity(compat) });
  return loaded(uws, compat, sha256, true);
}

/** What identifies a file without reading it: a rewrite, an `npm ci` or a copy gives it another. */
interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  /** Set by the kernel on every change: a file written and its times set back has another. */
  ctimeMs: number;
}

/** The release binary and its rewrite as a start checked them, and the release binary's checksum. */
interface RewriteRecord {
  release: FileIdentity | null;
  sha256: string;
  rewrite: FileIdentity | null;
}

function identity(path: string): FileIdentity | null {
  try {
    const { dev, ino, size, mtimeMs, ctimeMs } = statSync(path);
    return { dev, ino, size, mtimeMs, ctimeMs };
  } catch {
    return null;
  }
}

const sameFile = (a: FileIdentity | null, b: FileIdentity | null) => a !== null && b !== null && (Object.keys(a) as (keyof FileIdentity)[]).every((k) => a[k] === b[k]);

const recordPath = (cacheDir: string, name: string) => join(cacheDir, `${name}.json`);

/** The rewrite recorded for the release binary `name` when both files are still the ones recorded; null otherwise. */
function recorded(cacheDir: string, dir: string, name: string): { file: string; sha256: string } | null {
  try {
    const r = JSON.parse(readFileSync(recordPath(cacheDir, name), 'utf8')) as RewriteRecord;
    if (typeof r.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(r.sha256)) return null;
    const file = compatName(cacheDir, name, r.sha256);
    return sameFile(r.release, identity(join(dir, name))) && sameFile(r.rewrite, identity(file)) ? { file, sha256: r.sha256 } : null;
  } catch {
    return null;
  }
}

/** Records a checked rewrite, where the cache may be written (it may not, under deploy/wires.service: the next start checks again). */
function record(cacheDir: string, name: string, r: RewriteRecord): void {
  const path = recordPath(cacheDir, name);
  try {
    writeFileSync(`${path}.${process.pid}.tmp`, JSON.stringify(r));
    renameSync(`${path}.${process.pid}.tmp`, path);
  } catch {
    // read-only: checked at every start instead
  }
}

function compatName(cacheDir: string, name: string, sha256: string): string {
  return join(cacheDir, `${name.slice(0, -'.node'.length)}.${sha256.slice(0, 16)}.glibc-2.36.node`);
}

/**
 * Writes the glibc 2.36 rewrite of the package's binary to `cacheDir`, unless an identical
 * file is there; the name carries the original's hash, so an upgrade never reuses a stale
 * copy. Written to a temporary name and renamed, so that replicas starting together never
 * load a half-written file.
 */
function compatCopy(cacheDir: string, name: string, original: Buffer, sha256: string): string {
  const { patched, rebound } = glibcCompat(original);
  if (!patched) throw new UwsLoadError(`${name} asks for a newer glibc than this machine's, for something other than the C23 parsers`);
  const file = compatName(cacheDir, name, sha256);
  let current: Buffer | null = null;
  try {
    current = readFileSync(file);
  } catch {
    // not written yet
  }
  if (current === null || !current.equals(patched)) {
    try {
      mkdirSync(cacheDir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, patched, { mode: 0o755 });
      renameSync(tmp, file);
    } catch (err) {
      throw new UwsLoadError(
        `cannot write the glibc 2.36 rewrite of ${name} (${rebound.join(', ')}) to ${cacheDir}: ${(err as Error).message}. ` +
          'Run `npm run build` where the service is installed, as the user that owns it.',
      );
    }
  }
  return file;
}
