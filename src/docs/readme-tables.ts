/**
 * Markdown tables of the README that restate the catalogue. They are generated here and a
 * test checks the README holds them verbatim, so the README cannot drift from the code:
 * `node dist/scripts/readme-tables.js` prints them after a catalogue change.
 */
import { SOURCES, WIRES } from '../catalog/index.js';

export function sourcesTable(): string {
  const rows = SOURCES.map((s) => `| \`${s.wire.paid[0]!.path}\` | ${s.filter} | ${s.name} (\`${s.id}\`) | ${s.format} | ${s.wire.tier} |`);
  return ['| Wire | Filter | Source (id) | Format | Tier |', '|---|---|---|---|---|', ...rows].join('\n');
}

export function tiersTable(): string {
  const rows = WIRES.map((w) => `| ${w.id} | ${w.tier} | ${w.retention} | ${w.maxItems.toLocaleString('en-US')} |`);
  return ['| Wire | Tier | Retention (default and largest `since`) | Max items |', '|---|---|---|---|', ...rows].join('\n');
}
