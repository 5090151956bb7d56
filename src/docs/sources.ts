/** `/sources`: every source of every wire as the catalogue declares it, with its poll state. */
import { SOURCES } from '../catalog/index.js';
import type { SourceStatus } from '../ingest/scheduler.js';

export function buildSourceList(status: readonly SourceStatus[]): object[] {
  const byId = new Map(status.map((s) => [s.id, s]));
  return SOURCES.map((s) => {
    const state = byId.get(s.id);
    return {
      id: s.id,
      name: s.name,
      wire: s.wire.paid[0]!.path,
      filter: s.filter,
      format: s.format,
      // The URL actually polled (after WIRES_SOURCES overrides).
      url: state?.url ?? s.url,
      tier: s.wire.tier,
      state: state
        ? {
            polls: state.polls,
            last_success: state.last_success,
            last_error: state.last_error,
            consecutive_failures: state.consecutive_failures,
            items: state.items,
            etag_hits: state.etag_hits,
          }
        : null,
    };
  });
}
