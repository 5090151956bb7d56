/**
 * Previews answered from their recent answers must be the answers a fresh search would give:
 * ages right at answer time, a new item visible at once, `since` windows moving with the
 * clock. Checked against a fresh computation at the same (mocked) clock, over many times.
 */
import assert from 'node:assert/strict';
import { describe, mock, test } from 'node:test';
import { loadConfig } from '../src/config.js';
import { buildRouteRuntimes } from '../src/http/route-runtime.js';
import { createIndexes } from '../src/service.js';
import { rng } from '../bench/synthetic.js';

const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);

function setup() {
  const wires = createIndexes();
  const cve = wires.get('cve')!;
  // Items published at odd seconds over the last two hours, so their minutes tick at different times.
  const items = Array.from({ length: 40 }, (_, i) => ({
    id: `i${i}`,
    title: `Vulnerability ${i} in widget ${i % 3 ? 'server' : 'client'}`,
    url: `https://example.com/advisory/${i}`,
    source: 'CISA',
    filter: 'cisa',
    published: T0 - 7_000 - i * 187_000,
    summary: 'A remote attacker can run code.',
  }));
  cve.add(items, T0);
  const rt = buildRouteRuntimes(loadConfig({ PAY_TO_ADDRESS: '' }), wires, false).get('/cve/preview')!;
  return { cve, rt };
}

/** The answer without took_ms, which differs between any two answers. */
const body = (text: string) => text.replace(/"took_ms":[0-9.e-]+/, '"took_ms":0');

function fresh(rt: ReturnType<typeof setup>['rt'], raw: string): string {
  const parsed = rt.parse(raw);
  assert.ok(parsed.ok);
  return rt.run(parsed.params, performance.now());
}

function answer(rt: ReturnType<typeof setup>['rt'], raw: string): string {
  // A kept answer's bytes are rewritten on its next use: read them now.
  const hit = rt.cached(raw, performance.now());
  if (hit !== null) return hit.toString();
  const parsed = rt.parse(raw);
  assert.ok(parsed.ok);
  return rt.runAndRemember(raw, parsed.params, performance.now()).toString();
}

describe('preview answers kept between requests', () => {
  test('equal to a fresh search at every moment: ages, since windows, q and filters', (t) => {
    mock.timers.enable({ apis: ['Date'], now: T0 });
    t.after(() => mock.timers.reset());
    const { rt } = setup();
    const queries = ['', 'since=30m', 'since=1h&limit=2', 'q=vulnerability&since=45m', 'q=server', 'src=cisa&since=20m'];
    const random = rng(7);
    let hits = 0;
    for (let step = 0; step < 400; step++) {
      mock.timers.tick(Math.floor(random() * 20_000));
      for (const raw of queries) {
        const kept = rt.cached(raw, performance.now())?.toString() ?? null;
        if (kept !== null) hits++;
        const got = kept ?? answer(rt, raw);
        const want = fresh(rt, raw);
        // Relevance with q decays with time: within 0.002 over the minute an answer holds.
        const [g, w] = [JSON.parse(body(got)), JSON.parse(body(want))];
        g.articles.forEach((a: { relevance: number }, i: number) => {
          assert.ok(Math.abs(a.relevance - w.articles[i]?.relevance) <= 0.002, `${raw}: relevance ${a.relevance} vs ${w.articles[i]?.relevance}`);
          a.relevance = w.articles[i].relevance;
        });
        assert.deepEqual(g, w, `${raw} at +${Date.now() - T0} ms`);
      }
    }
    assert.ok(hits > 1000, `answers were reused (${hits} of 2400)`);
  });

  test('a new item is in the very next answer', (t) => {
    mock.timers.enable({ apis: ['Date'], now: T0 });
    t.after(() => mock.timers.reset());
    const { cve, rt } = setup();
    const before = JSON.parse(answer(rt, 'q=vulnerability'));
    assert.equal(rt.cached('q=vulnerability', performance.now()) !== null, true, 'kept');
    cve.add([{ id: 'new', title: 'Vulnerability in the new thing', url: 'https://example.com/new', source: 'CISA', filter: 'cisa', published: T0, summary: '' }], T0);
    assert.equal(rt.cached('q=vulnerability', performance.now()), null, 'the wire changed');
    const after = JSON.parse(answer(rt, 'q=vulnerability'));
    assert.equal(after.articles[0].url, 'https://example.com/new');
    assert.notDeepEqual(after, before);
  });

  test('the same answer while it is sent as text (young) and once it is encoded (held 100 ms)', (t) => {
    mock.timers.enable({ apis: ['Date'], now: T0 });
    t.after(() => mock.timers.reset());
    const { rt } = setup();
    const raw = 'q=server&since=1h';
    const first = answer(rt, raw);
    mock.timers.tick(50);
    const young = rt.cached(raw, performance.now());
    assert.equal(typeof young, 'string', 'not yet encoded');
    mock.timers.tick(100);
    const encoded = rt.cached(raw, performance.now());
    assert.ok(Buffer.isBuffer(encoded), 'encoded once it has held');
    const encodedText = encoded.toString();
    const again = rt.cached(raw, performance.now() - 12.5)!.toString();
    const back = rt.cached(raw, performance.now())!.toString();
    for (const text of [first, young as string, encodedText, again, back]) {
      assert.deepEqual(JSON.parse(body(text)), JSON.parse(body(fresh(rt, raw))));
      assert.match(text, /"took_ms":\d+\.\d{3},"freshest"/, 'took_ms with three decimals and nothing around it');
    }
    assert.ok(JSON.parse(again).took_ms >= 12.5, 'took_ms written into the encoded bytes, wider than before');
    assert.ok(JSON.parse(back).took_ms < 10, 'and narrower again');
  });
});
