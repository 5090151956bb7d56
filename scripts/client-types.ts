/**
 * Writes src/client/wires.gen.ts: the catalogue's wires and filters as TypeScript types, so a
 * bot importing the client gets `client.wire('cve', { src: 'cisa' })` checked at compile
 * time. Run `npm run build:client-types` after changing the catalogue; a test checks the
 * committed file is current.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WIRES } from '../src/catalog/index.js';

export function clientTypesSource(): string {
  const lines = [
    '// Generated from src/catalog/wires.ts by `npm run build:client-types`. Do not edit.',
    '',
    '/** Each wire and its filter parameter with the values it takes. */',
    'export interface WireFilters {',
  ];
  for (const w of WIRES) lines.push(`  ${JSON.stringify(w.id)}: { ${JSON.stringify(w.filter.name)}?: ${w.filter.values.map((v) => JSON.stringify(v)).join(' | ')} };`);
  lines.push('}', '', 'export type WireId = keyof WireFilters;', '');
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(fileURLToPath(new URL('../../src/client/wires.gen.ts', import.meta.url)), clientTypesSource());
  console.log('src/client/wires.gen.ts written');
}
