/**
 * Files only the service's own user may read: the payment journal holds signed
 * authorizations and payer addresses, the snapshots what was served, devnet.json funded
 * keys. Directories are 0700 and files 0600 whatever the umask, and a file or folder that
 * already exists with wider modes is narrowed, not trusted.
 */
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, writeSync } from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates the folder (and its parents) if needed, and makes it 0700. */
export function privateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(path, PRIVATE_DIR_MODE);
}

/** Opens a file with `flags` ('a', 'w', …) and makes it 0600 before anything is written. */
export function openPrivate(path: string, flags: string): number {
  const fd = openSync(path, flags, PRIVATE_FILE_MODE);
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/** Writes a whole file, 0600. */
export function writePrivateFile(path: string, data: string): void {
  const fd = openPrivate(path, 'w');
  try {
    writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
}
