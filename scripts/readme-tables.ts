/** Prints the catalogue tables of docs/sources.md (see src/docs/readme-tables.ts). */
import { pollingTable, sourcesTableOf, tiersTable } from '../src/docs/readme-tables.js';

console.log(tiersTable() + '\n\n' + pollingTable() + '\n\n' + sourcesTableOf(new URL('../../fixtures/', import.meta.url)));
