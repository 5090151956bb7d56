/** Prints the README's catalogue tables (see src/docs/readme-tables.ts). */
import { readFileSync } from 'node:fs';
import { capturesBySource, sourcesTable, tiersTable } from '../src/docs/readme-tables.js';

const captures = capturesBySource(JSON.parse(readFileSync(new URL('../../fixtures/real/index.json', import.meta.url), 'utf8')));
console.log(tiersTable() + '\n\n' + sourcesTable(captures));
