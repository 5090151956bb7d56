/**
 * /metrics as Prometheus reads it: the output is parsed with an independent parser of the
 * text exposition format, and the figures must move by exactly what a known sequence of
 * calls did. No label may carry a payer, a query or anything else a client chooses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import parsePrometheus from 'parse-prometheus-text-format';
import { startFixtureServer, type FixtureServer } from '../src/demo/fixture-server.js';
import { setLogLevel } from '../src/log.js';
import type { Service } from '../src/service.js';
import { ROUTES } from '../src/catalog/index.js';
import { encodePayment, signPayment } from './helpers/payments.js';
import { startPollingService, startTestService, type TestService } from './helpers/service.js';

interface Family {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[];
}

type Scrape = Map<string, Family> & { text: string };

async function scrape(base: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await fetch(`${base}/metrics`, { headers });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const families = parsePrometheus(text) as Family[];
  return Object.assign(new Map(families.map((f) => [f.name, f])), { text });
}

/**
 * One series of a labelled histogram, read from its line: the parser folds a labelled
 * histogram into a single sample (it reads only unlabelled ones).
 */
function histogramSeries(m: Scrape, name: string, suffix: 'count' | 'sum', route: string): number {
  const line = m.text.split('\n').find((l) => l.startsWith(`${name}_${suffix}{route="${route}"} `));
  return Number(line?.split(' ')[1] ?? 0);
}

/** The value of the sample with exactly these labels (0 when absent). */
function value(m: Scrape, name: string, labels: Record<string, string> = {}): number {
  const family = m.get(name);
  const sample = family?.metrics.find((s) => JSON.stringify(s.labels ?? {}) === JSON.stringify(labels));
  return Number(sample?.value ?? sample?.count ?? 0);
}

describe('/metrics', () => {
  let svc: TestService;
  before(async () => {
    // Optimistic: an accepted payment is answered at once (the facilitator is unreachable).
    svc = await startTestService({ SETTLEMENT: 'optimistic' });
  });
  after(async () => {
    await svc?.stop();
  });

  test('requests by route and status, latency by route, payments by outcome: each moves by exactly the calls made', async () => {
    const before = await scrape(svc.base);
    for (let i = 0; i < 5; i++) await (await svc.get('/cve/preview?src=cisa&q=secretquery')).text();
    await (await svc.get('/cve/latest')).text(); // 402: no payment
    await (await svc.get('/no/such/route/' + 'x'.repeat(20))).text(); // 404
    await (await svc.get('/cve/latest', { headers: { 'PAYMENT-SIGNATURE': 'e30=' } })).text(); // 400 invalid_payment
    const forged = (await signPayment({ amount: '5000' })).payload;
    forged.payload.signature = `0x${'ab'.repeat(65)}`;
    await (await svc.get('/cve/latest', { headers: { 'PAYMENT-SIGNATURE': encodePayment(forged) } })).text(); // 402 bad signature
    const { payload, account } = await signPayment({ amount: '5000' });
    // Accepted: verified and journaled (the facilitator is unreachable, so it stays pending).
    const paid = await svc.get('/cve/latest', { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) } });
    assert.equal(paid.status, 200, await paid.text());
    const after = await scrape(svc.base);

    const moved = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    assert.equal(moved('wires_http_requests_total', { route: '/cve/preview', status: '200' }), 5);
    assert.equal(moved('wires_http_requests_total', { route: '/cve/latest', status: '402' }), 2);
    assert.equal(moved('wires_http_requests_total', { route: '/cve/latest', status: '400' }), 1);
    assert.equal(moved('wires_http_requests_total', { route: 'other', status: '404' }), 1);
    assert.equal(moved('wires_http_requests_total', { route: '/cve/latest', status: '200' }), 1);
    const latency = 'wires_http_request_duration_seconds';
    assert.equal(after.get(latency)!.type, 'HISTOGRAM');
    assert.equal(histogramSeries(after, latency, 'count', '/cve/preview') - histogramSeries(before, latency, 'count', '/cve/preview'), 5);
    assert.ok(histogramSeries(after, latency, 'sum', '/cve/preview') > histogramSeries(before, latency, 'sum', '/cve/preview'));

    assert.equal(moved('wires_payments_total', { outcome: 'invalid_payment' }), 1);
    assert.equal(moved('wires_payments_total', { outcome: 'invalid_exact_evm_payload_signature' }), 1);
    assert.equal(moved('wires_payments_total', { outcome: 'accepted' }), 1);
    assert.ok(value(after, 'wires_journal_bytes') > value(before, 'wires_journal_bytes'), 'the journal grew');

    const health = (await (await svc.get('/health')).json()) as any;
    assert.equal(value(after, 'wires_settlements_pending'), health.x402.settlement.pending);
    assert.equal(value(after, 'wires_wire_items', { wire: 'cve' }), health.wires.cve.items);

    // Bounded labels only: routes from the catalogue (or "other"), fixed statuses and outcomes.
    const text = await (await svc.get('/metrics')).text();
    for (const secret of ['secretquery', account.address.toLowerCase(), account.address, '/no/such/route']) assert.ok(!text.includes(secret), secret);
    const known = new Set([...ROUTES.map((r) => r.path), 'other']);
    for (const s of after.get('wires_http_requests_total')!.metrics) assert.ok(known.has(s.labels!.route!) || s.labels!.route!.startsWith('/'), s.labels!.route);
    assert.ok(after.has('nodejs_eventloop_lag_p99_seconds'), 'event-loop lag');
    assert.ok(after.has('nodejs_gc_duration_seconds'), 'GC pauses');
  });
});

describe('METRICS_TOKEN', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ METRICS_TOKEN: 'scrape-me-123' });
  });
  after(async () => {
    await svc?.stop();
  });

  test('without the bearer token: 401 JSON; with it: the metrics', async () => {
    const attempts: Record<string, string>[] = [{}, { Authorization: 'Bearer wrong' }, { Authorization: 'scrape-me-123' }];
    for (const headers of attempts) {
      const res = await svc.get('/metrics', { headers });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"');
      assert.equal(((await res.json()) as any).error.code, 'unauthorized');
    }
    const m = await scrape(svc.base, { Authorization: 'Bearer scrape-me-123' });
    assert.ok(m.has('wires_http_requests_total'));
  });
});

describe('ingestion metrics', () => {
  let fixtures: FixtureServer;
  let service: Service;
  let base: string;
  before(async () => {
    setLogLevel('error');
    fixtures = await startFixtureServer();
    ({ service, base } = await startPollingService(fixtures.overrides));
    await service.scheduler!.firstRun;
  });
  after(async () => {
    await service?.stop();
    await fixtures?.close();
  });

  test('per source: polls by outcome, items, last success; per wire: items and newest age; the worker pool', async () => {
    const m = await scrape(base);
    const sources = ((await (await fetch(`${base}/sources`)).json()) as any[]).map((s) => s.id ?? s.source);
    const polled = m.get('wires_source_polls_total')!.metrics.filter((s) => s.labels!.outcome === 'ok' && Number(s.value) >= 1);
    assert.ok(polled.length > 0.9 * sources.length, `${polled.length} of ${sources.length} sources polled ok`);
    for (const s of m.get('wires_source_last_success_age_seconds')!.metrics.filter((s) => polled.some((p) => p.labels!.source === s.labels!.source))) {
      assert.ok(Number(s.value) >= 0 && Number(s.value) < 600, `${s.labels!.source} succeeded recently`);
    }
    assert.ok(value(m, 'wires_wire_items', { wire: 'quake' }) > 0);
    assert.ok(value(m, 'wires_wire_newest_age_seconds', { wire: 'quake' }) >= 0);
    assert.equal(value(m, 'wires_ingest_threads'), 1);
    assert.equal(value(m, 'wires_ingest_queue'), 0);
  });
});
