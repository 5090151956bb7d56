/**
 * DEVNET_FILE (default ./devnet.json): where a running devnet writes its coordinates and
 * funded keys (0600), with the process that owns it (owner.ts). A file whose owner is gone
 * (a run killed with SIGKILL) is stale and reclaimed; one whose owner still runs is not
 * taken over.
 */
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { log } from '../log.js';
import { ownerAlive, thisProcess, type Owner } from '../owner.js';
import { writePrivateFile } from '../private-files.js';
import type { DevnetInfo } from './devnet.js';

export function devnetFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.DEVNET_FILE || './devnet.json');
}

/** Throws if a live process owns the file; removes a stale one. Call before starting the devnet. */
export function claimDevnetFile(path: string): void {
  let owner: Partial<Owner> = {};
  try {
    owner = (JSON.parse(readFileSync(path, 'utf8')) as { owner?: Partial<Owner> }).owner ?? {};
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    // Unreadable or not JSON: nobody can be using it.
  }
  if (owner.pid !== process.pid && ownerAlive(owner)) {
    throw new Error(`${path} belongs to a running devnet (pid ${owner.pid}); stop it or set DEVNET_FILE to another path`);
  }
  log.warn('reclaiming a stale devnet file', { path, ...(owner.pid ? { pid: owner.pid } : {}) });
  rmSync(path, { force: true });
}

export function writeDevnetFile(path: string, info: DevnetInfo): void {
  writePrivateFile(path, JSON.stringify({ ...info, owner: thisProcess() }, null, 2) + '\n');
}
