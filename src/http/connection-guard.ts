/**
 * Keeps the process's last file descriptors out of the clients' reach. Once a process has no
 * descriptor left, uWebSockets.js retries the failing accept() in a busy loop (a whole core,
 * `test/fd-exhaustion.test.ts` measured it) while new clients wait unanswered in the kernel's
 * backlog. So the service never lets connections get that far: it counts the connections it
 * holds, and once its open descriptors come within a reserve of the limit, each new connection
 * is answered `503 too_many_connections` with `Retry-After` and closed at once, which frees its
 * descriptor again. The reserve is what the rest of the process needs meanwhile: the journal,
 * snapshots, outgoing polls, Redis.
 *
 * Counting: uWebSockets.js reports every HTTP connection's open and close (its `filter`),
 * except the close of one that became a WebSocket, which the stream endpoint reports instead.
 * What else holds descriptors is read from /proc/self/fd once a second, off the serving thread
 * (an asynchronous readdir): the estimate is that reading plus the connections opened since.
 */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';

const REFRESH_MS = 1000;

/** The soft limit on open descriptors (null where /proc does not say: not Linux, or unlimited). */
export function fdLimit(): number | null {
  try {
    const soft = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]);
    return soft > 0 ? soft : null;
  } catch {
    return null;
  }
}

export class ConnectionGuard {
  /** Connections held now (HTTP and WebSocket). */
  private connections = 0;
  private fdsAtRefresh = 0;
  private connectionsAtRefresh = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Connections refused since start. */
  refused = 0;
  private refusing = false;
  /** Refuse once open descriptors reach this (null: never). */
  readonly threshold: number | null;

  /** `onChange`: told when refusing starts and stops (for the log). */
  constructor(
    limit: number | null,
    private readonly onChange: (refusing: boolean, detail: { open_fds: number; limit: number }) => void = () => {},
  ) {
    // A sixteenth of the limit, at least 64: 4,096 of 65,536, 64 of 1,024.
    this.threshold = limit === null ? null : limit - Math.max(64, limit >> 4);
    if (this.threshold === null) return;
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.timer.unref();
    void this.refresh();
  }

  /** Connections held now. */
  get open(): number {
    return this.connections;
  }

  /** Descriptors open now, as estimated. */
  get openFds(): number {
    return this.fdsAtRefresh + this.connections - this.connectionsAtRefresh;
  }

  /** A connection opened; false when it must be refused (and closed). */
  opened(): boolean {
    this.connections++;
    if (this.threshold === null || this.openFds < this.threshold) return true;
    this.refused++;
    this.note(true);
    return false;
  }

  /** A connection closed (an HTTP one, or a WebSocket). */
  closed(): void {
    this.connections--;
    if (this.refusing && this.openFds < this.threshold! * 0.9) this.note(false);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async refresh(): Promise<void> {
    const connections = this.connections;
    try {
      this.fdsAtRefresh = (await readdir('/proc/self/fd')).length;
      this.connectionsAtRefresh = connections;
    } catch {
      // No /proc: the connections alone are counted.
    }
  }

  private note(refusing: boolean): void {
    if (refusing === this.refusing) return;
    this.refusing = refusing;
    this.onChange(refusing, { open_fds: this.openFds, limit: this.threshold! });
  }
}
