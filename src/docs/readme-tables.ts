/**
 * Markdown tables of the README that restate the catalogue. They are generated here and a
 * test checks the README holds them verbatim, so the README cannot drift from the code:
 * `node dist/scripts/readme-tables.js` prints them after a catalogue change.
 */
import { SOURCES, WIRES } from '../catalog/index.js';

/**
 * `captures`: source id → the real captured documents of it in fixtures/real/ (their
 * index.json), which test/real-feeds.test.ts parses.
 */
export function sourcesTable(captures: ReadonlyMap<string, readonly string[]>): string {
  const rows = SOURCES.map((s) => {
    const real = captures.get(s.id)?.map((f) => `\`${f}\``).join(', ') ?? '—';
    return `| \`${s.wire.paid[0]!.path}\` | ${s.filter} | ${s.name} (\`${s.id}\`) | ${s.format} | ${s.wire.tier} | ${real} |`;
  });
  return ['| Wire | Filter | Source (id) | Format | Tier | Real capture tested |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** fixtures/real/index.json as `sourcesTable` takes it. */
export function capturesBySource(index: readonly { file: string; sourceId: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of index) out.set(c.sourceId, [...(out.get(c.sourceId) ?? []), c.file]);
  return out;
}

export function tiersTable(): string {
  const rows = WIRES.map((w) => `| ${w.id} | ${w.tier} | ${w.retention} | ${w.maxItems.toLocaleString('en-US')} |`);
  return ['| Wire | Tier | Retention (default and largest `since`) | Max items |', '|---|---|---|---|', ...rows].join('\n');
}
