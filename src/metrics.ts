/**
 * `/metrics` in the Prometheus text format, rendered by prom-client.
 *
 * The request path pays for one thing only: `RequestStats.observe`, a few array increments
 * (prom-client's own labelled histogram costs about 0.4 µs a call, 2–3 % of a preview).
 * Everything else is read when Prometheus scrapes: payment, source, wire and worker-pool
 * figures come from the objects that already keep them, through `collect` callbacks. No
 * label carries a payer, a query or any other unbounded value: routes are the catalogue's
 * paths, statuses and payment reasons fixed lists, sources and wires the catalogue's ids.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

/** Upper bounds (seconds) of the request latency buckets: a preview takes tens of µs, a synchronous paid call a block. */
const BOUNDS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATUSES = [200, 202, 204, 308, 400, 401, 402, 404, 405, 409, 413, 414, 429, 500, 503] as const;
const OTHER_STATUS = STATUSES.length;
/** The route label of anything that is not a known path (a 404 must not create a label). */
export const OTHER_ROUTE = 'other';

const STATUS_INDEX = new Int8Array(600).fill(OTHER_STATUS);
STATUSES.forEach((s, i) => (STATUS_INDEX[s] = i));

/** Request counts by route and status, and latency by route, in flat typed arrays. */
export class RequestStats {
  private readonly index = new Map<string, number>();
  private readonly counts: Float64Array;
  private readonly buckets: Float64Array;
  private readonly sums: Float64Array;

  constructor(readonly routes: readonly string[]) {
    routes.forEach((r, i) => this.index.set(r, i));
    if (!this.index.has(OTHER_ROUTE)) throw new Error(`the route list must include "${OTHER_ROUTE}"`);
    this.counts = new Float64Array(routes.length * (STATUSES.length + 1));
    this.buckets = new Float64Array(routes.length * (BOUNDS.length + 1));
    this.sums = new Float64Array(routes.length);
  }

  /** The route's slot; unknown paths share the `other` slot. */
  slot(path: string): number {
    return this.index.get(path) ?? this.index.get(OTHER_ROUTE)!;
  }

  observe(route: number, status: number, seconds: number): void {
    this.counts[route * (STATUSES.length + 1) + (status < 600 ? STATUS_INDEX[status]! : OTHER_STATUS)]!++;
    let b = 0;
    while (b < BOUNDS.length && seconds > BOUNDS[b]!) b++;
    this.buckets[route * (BOUNDS.length + 1) + b]!++;
    this.sums[route]! += seconds;
  }

  /** prom-client metric objects (rendered by the registry at scrape time). */
  metrics() {
    const stats = this;
    const requests = {
      name: 'wires_http_requests_total',
      help: 'HTTP requests answered, by route (catalogue path) and status.',
      type: 'counter',
      aggregator: 'sum',
      get() {
        const values: { labels: Record<string, string>; value: number }[] = [];
        stats.routes.forEach((route, r) => {
          for (let s = 0; s <= STATUSES.length; s++) {
            const value = stats.counts[r * (STATUSES.length + 1) + s]!;
            if (value > 0) values.push({ labels: { route, status: s === OTHER_STATUS ? 'other' : String(STATUSES[s]) }, value });
          }
        });
        return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
      },
    };
    const duration = {
      name: 'wires_http_request_duration_seconds',
      help: 'Time from a request reaching the service to its answer being written, by route.',
      type: 'histogram',
      aggregator: 'sum',
      get() {
        const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
        stats.routes.forEach((route, r) => {
          const base = r * (BOUNDS.length + 1);
          let count = 0;
          for (let b = 0; b <= BOUNDS.length; b++) count += stats.buckets[base + b]!;
          if (count === 0) return;
          let cumulative = 0;
          for (let b = 0; b < BOUNDS.length; b++) {
            cumulative += stats.buckets[base + b]!;
            values.push({ metricName: `${this.name}_bucket`, labels: { route, le: BOUNDS[b]! }, value: cumulative });
          }
          values.push({ metricName: `${this.name}_bucket`, labels: { route, le: '+Inf' }, value: count });
          values.push({ metricName: `${this.name}_sum`, labels: { route }, value: stats.sums[r]! });
          values.push({ metricName: `${this.name}_count`, labels: { route }, value: count });
        });
        return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
      },
    };
    return [requests, duration];
  }
}

/** What the registry reads at scrape time; each part is absent when that subsystem is off. */
export interface MetricSources {
  requests: RequestStats;
  payments?: () => {
    pending: number;
    settled: number;
    failed: number;
    oldest_pending_sec: number | null;
    exposure: bigint | null;
    journalBytes: number;
    storeAvailable: boolean;
    outcomes: ReadonlyMap<string, number>;
  };
  sources?: () => readonly { id: string; polls: number; failures: number; etag_hits: number; items: number; skipped: number; last_success: string | null }[];
  wires: () => Iterable<{ id: string; items: number; newest: number | null }>;
  pool?: () => { queueSize: number; threads: number; utilization: number };
  streams?: () => { connections: number; subscriptions: number; pushed: number };
  /** Every in-memory table a client can grow, by name, with its size. */
  tables?: () => Iterable<[string, number]>;
  /** Times optional memory was dropped with the heap near its limit. */
  sheds?: () => number;
  /** Connections held (HTTP and WebSocket) and refused near the file-descriptor limit (connection-guard.ts). */
  connections?: () => { open: number; refused: number };
}

/**
 * What the heap holds right after a full collection: its live size, free of the garbage a
 * reading between collections catches (which swings by a third). The figure to watch for a
 * leak. One observer per process, however many registries.
 */
let liveHeap = 0;
let observing = false;
function observeFullCollections(): void {
  if (observing) return;
  observing = true;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) liveHeap = getHeapStatistics().used_heap_size;
    }
  }).observe({ entryTypes: ['gc'] });
}

export function createRegistry(src: MetricSources): Registry {
  const register = new Registry();
  // Process metrics, event-loop lag (nodejs_eventloop_lag_*) and GC pauses (nodejs_gc_duration_seconds).
  collectDefaultMetrics({ register, prefix: '', eventLoopMonitoringPrecision: 10 });
  for (const m of src.requests.metrics()) register.registerMetric(m as never);

  const gauge = (name: string, help: string, labelNames: string[], collect: (g: Gauge) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [register],
      collect() {
        this.reset();
        collect(this);
      },
    });
  const counter = (name: string, help: string, labelNames: string[], collect: (c: Counter) => void) =>
    new Counter({
      name,
      help,
      labelNames,
      registers: [register],
      collect() {
        this.reset();
        collect(this);
      },
    });

  if (src.payments) {
    const pay = src.payments;
    counter('wires_payments_total', 'Payments by outcome: accepted, repeat (answered again), replay, or the refusal reason.', ['outcome'], (c) => {
      for (const [outcome, n] of pay().outcomes) c.inc({ outcome }, n);
    });
    counter('wires_settlements_total', 'Settlements by result since the journal began.', ['result'], (c) => {
      const p = pay();
      c.inc({ result: 'settled' }, p.settled);
      c.inc({ result: 'failed' }, p.failed);
    });
    gauge('wires_settlements_pending', 'Accepted payments whose settlement has no outcome yet.', [], (g) => g.set(pay().pending));
    gauge('wires_settlement_lag_seconds', 'Age of the oldest pending settlement (0 when none).', [], (g) => g.set(pay().oldest_pending_sec ?? 0));
    gauge('wires_optimistic_exposure_usdc', 'Unsettled value of all payers together (USDC); absent in replica mode, where it is counted in Redis.', [], (g) => {
      const exposure = pay().exposure;
      if (exposure !== null) g.set(Number(exposure) / 1e6);
    });
    gauge('wires_journal_bytes', 'Size of the payment journal file (0 in replica mode: the journal is in Redis).', [], (g) => g.set(pay().journalBytes));
    gauge('wires_payment_store_up', 'The payment store answers (1) or not (0: paid calls answer 503). Always 1 without REDIS_URL.', [], (g) => g.set(pay().storeAvailable ? 1 : 0));
  }
  if (src.sources) {
    const sources = src.sources;
    counter('wires_source_polls_total', 'Polls per source by outcome: ok (new document), not_modified, failed.', ['source', 'outcome'], (c) => {
      for (const s of sources()) {
        c.inc({ source: s.id, outcome: 'ok' }, s.polls - s.failures - s.etag_hits);
        c.inc({ source: s.id, outcome: 'not_modified' }, s.etag_hits);
        c.inc({ source: s.id, outcome: 'failed' }, s.failures);
      }
    });
    gauge('wires_source_items', 'Items in the last document polled from the source.', ['source'], (g) => {
      for (const s of sources()) g.set({ source: s.id }, s.items);
    });
    counter('wires_source_skipped_entries_total', 'Entries of the source skipped while parsing.', ['source'], (c) => {
      for (const s of sources()) c.inc({ source: s.id }, s.skipped);
    });
    gauge('wires_source_last_success_age_seconds', 'Seconds since the source was last polled successfully (-1: never).', ['source'], (g) => {
      const now = Date.now();
      for (const s of sources()) g.set({ source: s.id }, s.last_success === null ? -1 : (now - Date.parse(s.last_success)) / 1000);
    });
  }
  gauge('wires_wire_items', 'Items held by the wire.', ['wire'], (g) => {
    for (const w of src.wires()) g.set({ wire: w.id }, w.items);
  });
  gauge('wires_wire_newest_age_seconds', "Age of the wire's newest item (-1: empty).", ['wire'], (g) => {
    const now = Date.now();
    for (const w of src.wires()) g.set({ wire: w.id }, w.newest === null ? -1 : (now - w.newest) / 1000);
  });
  if (src.pool) {
    const pool = src.pool;
    gauge('wires_ingest_queue', 'Poll tasks waiting for a worker thread.', [], (g) => g.set(pool().queueSize));
    gauge('wires_ingest_threads', 'Worker threads fetching and parsing.', [], (g) => g.set(pool().threads));
    gauge('wires_ingest_utilization', "Share of the worker pool's capacity in use since start (0–1).", [], (g) => g.set(pool().utilization));
  }
  if (src.streams) {
    const streams = src.streams;
    gauge('wires_stream_connections', 'Open /stream WebSocket connections.', [], (g) => g.set(streams().connections));
    gauge('wires_stream_subscriptions', 'Distinct stream subscriptions (subscribers with the same parameters share one).', [], (g) => g.set(streams().subscriptions));
    counter('wires_stream_pushed_total', 'Item messages published to stream subscriptions (one per matching subscription).', [], (c) => c.inc(streams().pushed));
  }
  observeFullCollections();
  gauge('wires_heap_live_bytes', 'Heap in use right after the last full garbage collection (0 before the first).', [], (g) => g.set(liveHeap));
  if (src.sheds) {
    const sheds = src.sheds;
    counter('wires_memory_sheds_total', 'Times the heap neared its limit and preview answers and retry bodies were dropped.', [], (c) => c.inc(sheds()));
  }
  if (src.connections) {
    const connections = src.connections;
    gauge('wires_connections_open', 'Client connections held now, HTTP and WebSocket.', [], (g) => g.set(connections().open));
    counter('wires_connections_refused_total', 'New connections answered 503 too_many_connections because open file descriptors neared the limit.', [], (c) => c.inc(connections().refused));
  }
  if (src.tables) {
    const tables = src.tables;
    gauge('wires_table_entries', 'Entries in each in-memory table a client can grow (retry_body_bytes: bytes); docs/deployment.md states their bounds.', ['table'], (g) => {
      for (const [table, n] of tables()) g.set({ table }, n);
    });
  }
  return register;
}
