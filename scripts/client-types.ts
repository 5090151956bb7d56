/**
 * Writes src/client/wires.gen.ts: the catalogue's wires and filters as TypeScript types, so a
 * bot importing the client gets `client.wire('cve', { src: 'cisa' })` checked at compile
 * time. Run `npm run build:client-types` after changing the catalogue; a test checks the
 * committed file is current.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { facetsOf } from '../src/catalog/facets.js';
import { fieldsOf, WIRES, type FieldDef } from '../src/catalog/index.js';

export function clientTypesSource(): string {
  const lines = [
    '// Generated from src/catalog/wires.ts by `npm run build:client-types`. Do not edit.',
    '',
    '/** Each wire and its filter parameter with the values it takes. */',
    'export interface WireFilters {',
  ];
  for (const w of WIRES) lines.push(`  ${JSON.stringify(w.id)}: { ${JSON.stringify(w.filter.name)}?: ${w.filter.values.map((v) => JSON.stringify(v)).join(' | ')} };`);
  lines.push('}', '', 'export type WireId = keyof WireFilters;', '');
  lines.push("/** Each wire's filters on structured fields (comma-separated values where a list is taken). */", 'export interface WireFacets {');
  for (const w of WIRES)
    lines.push(
      `  ${JSON.stringify(w.id)}: { ${facetsOf(w.id)
        .map((f) => `${JSON.stringify(f.param)}?: string; `)
        .join('')}};`,
    );
  lines.push('}', '');
  lines.push("/** Each wire's `data`: the fields its articles carry where the source states them. */", 'export interface WireData {');
  for (const w of WIRES)
    lines.push(
      `  ${JSON.stringify(w.id)}: { ${fieldsOf(w.id)
        .map((f) => `${JSON.stringify(f.name)}?: ${tsType(f.schema)}; `)
        .join('')}};`,
    );
  lines.push('}', '');
  return lines.join('\n');
}

function tsType(s: FieldDef['schema']): string {
  if (s.type === 'array')
    return s.items.type === 'object'
      ? `{ ${Object.keys(s.items.properties)
          .map((k) => `${JSON.stringify(k)}?: string; `)
          .join('')}}[]`
      : 'string[]';
  if (s.type === 'object')
    return `{ ${Object.keys(s.properties)
      .map((k) => `${JSON.stringify(k)}?: string; `)
      .join('')}}`;
  return s.type === 'integer' ? 'number' : s.type;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(fileURLToPath(new URL('../../src/client/wires.gen.ts', import.meta.url)), clientTypesSource());
  console.log('src/client/wires.gen.ts written');
}
