/**
 * One instance per DATA_DIR: two services writing one payment journal would each settle
 * the other's entries and compact the file under it. At start the service takes
 * `DATA_DIR/lock` (created exclusively, 0600, holding its pid and start time); a lock whose
 * owner still runs refuses the start and names it; one whose owner is gone (a crash) is
 * taken over. The lock is removed at stop.
 */
import { closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { log } from './log.js';
import { ownerAlive, thisProcess, type Owner } from './owner.js';
import { openPrivate } from './private-files.js';

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

export interface DataLock {
  release(): void;
}

export function lockDataDir(dataDir: string): DataLock {
  const path = join(dataDir, 'lock');
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openPrivate(path, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw lockedBy(path, readOwner(path), err);
      const owner = readOwner(path);
      if (owner && owner.pid !== process.pid && ownerAlive(owner)) throw lockedBy(path, owner);
      log.warn('taking over the lock of a service that is gone', { path, ...(owner ? { pid: owner.pid } : {}) });
      rmSync(path, { force: true });
      continue;
    }
    writeSync(fd, JSON.stringify(thisProcess()) + '\n');
    closeSync(fd);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.off('exit', release);
      rmSync(path, { force: true });
    };
    process.on('exit', release);
    return { release };
  }
}

function readOwner(path: string): Owner | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Owner;
  } catch {
    return null;
  }
}

function lockedBy(path: string, owner: Owner | null, cause?: unknown): DataDirLockedError {
  const who = owner ? `the service with pid ${owner.pid}` : 'another service';
  return new DataDirLockedError(`DATA_DIR is in use by ${who} (${path}); stop it or give this instance another DATA_DIR`, { cause });
}
