/** `/sources`: every source of every wire as the catalogue declares it, with its poll state. */
import { filtersOf, SOURCES } from '../catalog/index.js';
import type { SourceStatus } from '../ingest/scheduler.js';
import { sourceKey, type WireIndex } from '../search/wire-index.js';

/**
 * Per source: the catalogue's entry, the URL polled, and its state: polls, failures, the
 * last document (entries, items, entries skipped and the main reason) and the items its
 * wire holds from its publisher under its filter value (two sources of one publisher and
 * filter value, such as two CNBC markets feeds, share that count).
 */
export function buildSourceList(status: readonly SourceStatus[], wires: ReadonlyMap<string, WireIndex>): object[] {
  const byId = new Map(status.map((s) => [s.id, s]));
  const held = new Map<string, Map<string, number>>();
  const heldBy = (wire: string, name: string, filter: string) => {
    if (!held.has(wire)) held.set(wire, wires.get(wire)?.countBySource() ?? new Map());
    return held.get(wire)!.get(sourceKey(name, filter)) ?? 0;
  };
  return SOURCES.map((s) => {
    const state = byId.get(s.id);
    return {
      id: s.id,
      name: s.name,
      wire: s.wire.paid[0]!.path,
      filter: s.filter ?? null,
      filters: filtersOf(s),
      format: s.format,
      // The URL actually polled (after WIRES_SOURCES overrides).
      url: state?.url ?? s.url,
      tier: s.wire.tier,
      state: state
        ? {
            polls: state.polls,
            failures: state.failures,
            last_success: state.last_success,
            last_error: state.last_error,
            consecutive_failures: state.consecutive_failures,
            items: state.items,
            items_held: filtersOf(s).reduce((n, f) => n + heldBy(s.wire.id, s.name, f), 0),
            entries_skipped: state.skipped,
            last_document: state.last_document,
            etag_hits: state.etag_hits,
            next_poll_after: state.next_poll_after,
            freshness: state.freshness,
            delivery: state.delivery,
          }
        : null,
    };
  });
}
