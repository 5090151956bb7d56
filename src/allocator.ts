/**
 * Which malloc the process runs on. deploy/wires.service preloads jemalloc: on glibc's malloc
 * the service's RSS is about 120 MB higher under the same load, and keeps growing for ten
 * minutes after a start, in the per-thread arenas the parser worker, libuv's threads and V8's
 * helper threads allocate from (docs/deployment.md#memory-allocator). Reported in /health and
 * at start, so an operator can see that the preload took.
 */
import { readFileSync } from 'node:fs';

export type Allocator = 'jemalloc' | 'glibc' | 'unknown';

export function allocator(): Allocator {
  try {
    return /\/libjemalloc[^/\n]*$/m.test(readFileSync('/proc/self/maps', 'utf8')) ? 'jemalloc' : 'glibc';
  } catch {
    return 'unknown';
  }
}
