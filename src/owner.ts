/**
 * Which process owns a file (a DATA_DIR lock, a devnet.json), and whether it still runs.
 * A pid alone is not enough: after a crash the pid may be reused by an unrelated process,
 * so the owner is the pid with its start time (field 22 of /proc/<pid>/stat, in clock ticks
 * since boot), which no later process with the same pid shares.
 */
import { readFileSync } from 'node:fs';

export interface Owner {
  pid: number;
  /** Start time of the process, or null where /proc cannot tell. */
  started: number | null;
}

function startTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[19]);
  } catch {
    return null;
  }
}

export function thisProcess(): Owner {
  return { pid: process.pid, started: startTime(process.pid) };
}

/** Does the recorded owner still run? */
export function ownerAlive(owner: Partial<Owner>): boolean {
  if (typeof owner.pid !== 'number' || !Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    // EPERM: it exists, under another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (typeof owner.started !== 'number') return true;
  const now = startTime(owner.pid);
  return now === null || now === owner.started;
}
