/**
 * Loads the uWebSockets.js native binary for this platform and Node ABI, and says which file
 * it was.
 *
 * The package (DESIGN decision 1; docs/deployment.md, "Runtime") ships one binary per platform, arch and
 * Node ABI, linked against glibc 2.38. On an older glibc (Debian 12 has 2.36) the loader
 * refuses it; we then load a copy rebound to the classic C parsers (glibc-compat.ts), written
 * by `npm run build` (or the first start) beside the compiled code, in dist/uws-glibc-2.36/,
 * where `npm ci` does not remove it, and checked against a fresh rewrite at every start.
 * There is no slow fallback: without a binary for this runtime, the service does not start.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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
  const loaded = (uws: unknown, binary: string, compat: boolean): LoadedUws => ({ uws: uws as typeof UWS, version, binary, sha256, glibcCompat: compat });
  try {
    return loaded(require(join(dir, name)), join(dir, name), false);
  } catch (err) {
    const message = (err as Error).message;
    if (process.platform !== 'linux' || !NEEDS_NEWER_GLIBC.test(message)) throw new UwsLoadError(`uWebSockets.js ${version}: ${name} did not load: ${message}`);
  }
  const compat = compatCopy(cacheDir, name, original, sha256);
  try {
    return loaded(require(compat), compat, true);
  } catch (err) {
    throw new UwsLoadError(`uWebSockets.js ${version}: ${basename(compat)}, the glibc 2.36 rewrite of ${name}, did not load: ${(err as Error).message}`);
  }
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
  const file = join(cacheDir, `${name.slice(0, -'.node'.length)}.${sha256.slice(0, 16)}.glibc-2.36.node`);
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
