/**
 * Markdown tables of docs/sources.md that restate the catalogue. They are generated here and a
 * test checks the page holds them verbatim, so the docs cannot drift from the code:
 * `node dist/scripts/readme-tables.js` prints them after a catalogue change.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_BUDGET, fieldsOf, filtersOf, HOST_BUDGETS, SOURCES, TIER_POLLING, WIRES } from '../catalog/index.js';
import { fieldType } from './llms.js';

/** A real captured document of fixtures/real/ that test/real-feeds.test.ts parses as a source. */
interface CaptureRef {
  file: string;
  /** Parsed as this source because it shares the capture's generator and template. */
  sameTemplate: boolean;
}

/**
 * `captures`: source id → the real documents it is tested on. A source with none names the
 * hand-written fixture of fixtures/feeds/ (`handWritten`: source id → file) that the tests
 * and the demo use for it.
 */
function sourcesTable(captures: ReadonlyMap<string, readonly CaptureRef[]>, handWritten: Readonly<Record<string, string>>): string {
  const rows = SOURCES.map((s) => {
    const refs = captures.get(s.id);
    const real = refs ? refs.map((c) => `\`${c.file}\`${c.sameTemplate ? ' (same template)' : ''}`).join(', ') : `none found; hand-written \`${handWritten[s.id] ?? '?'}\``;
    return `| \`${s.wire.paid[0]!.path}\` | ${filtersOf(s).join(', ')} | ${s.name} (\`${s.id}\`) | ${s.format} | ${s.wire.tier} | ${real} |`;
  });
  return ['| Wire | Filter | Source (id) | Format | Tier | Real capture tested |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** fixtures/real/index.json as `sourcesTable` takes it: a capture's own source first. */
function capturesBySource(index: readonly { file: string; sourceId: string; sameTemplate?: { sourceId: string }[] }[]): Map<string, CaptureRef[]> {
  const out = new Map<string, CaptureRef[]>();
  const add = (id: string, ref: CaptureRef) => out.set(id, [...(out.get(id) ?? []), ref]);
  for (const c of index) add(c.sourceId, { file: c.file, sameTemplate: false });
  for (const c of index) for (const sibling of c.sameTemplate ?? []) add(sibling.sourceId, { file: c.file, sameTemplate: true });
  return out;
}

/** The sources table of the fixtures in `fixturesDir` (real/index.json and feeds/index.json). */
export function sourcesTableOf(fixturesDir: URL): string {
  const read = (path: string) => JSON.parse(readFileSync(new URL(path, fixturesDir), 'utf8'));
  return sourcesTable(capturesBySource(read('real/index.json')), read('feeds/index.json'));
}

export function tiersTable(): string {
  const rows = WIRES.map((w) => `| ${w.id} | ${w.tier} | ${w.retention} | ${w.maxItems.toLocaleString('en-US')} |`);
  return ['| Wire | Tier | Retention (default and largest `since`) | Max items |', '|---|---|---|---|', ...rows].join('\n');
}

/** Every poll interval and request budget, with where each number comes from. */
export function pollingTable(): string {
  const rows = [
    ...Object.entries(TIER_POLLING).map(([tier, t]) => `| ${tier} tier | every ${t.floorSec}–${t.ceilingSec} s | ${t.why} |`),
    ...SOURCES.filter((s) => s.interval !== undefined || s.minIntervalSec !== undefined).map((s) =>
      s.interval !== undefined
        ? `| \`${s.id}\` | every ${s.interval.sec} s, fixed | ${s.interval.why} |`
        : `| \`${s.id}\` | at least ${s.minIntervalSec} s apart | the publisher's own politeness floor |`,
    ),
    ...Object.entries(HOST_BUDGETS).map(([host, b]) => `| \`${host}\` | at most ${b.perSecond} requests in any second${b.noRetries ? ', no retries' : ''} | ${b.why} |`),
    `| any other host | at most ${DEFAULT_BUDGET.perSecond} request in any second | ${DEFAULT_BUDGET.why} |`,
  ];
  return ['| What | Polled | Why |', '|---|---|---|', ...rows].join('\n');
}

/** docs/routes.md's table of every wire's `data` fields. */
export function fieldsTable(): string {
  const rows = WIRES.flatMap((w) => fieldsOf(w.id).map((f) => `| ${w.id} | \`${f.name}\` | ${fieldType(f)} | ${f.doc} |`));
  return ['| Wire | Field | Type | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}
