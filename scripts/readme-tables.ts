/** Prints the catalogue tables of docs/sources.md, then docs/routes.md's fields table (see src/docs/readme-tables.ts). */
import { fieldsTable, pollingTable, sourcesTableOf, tiersTable } from '../src/docs/readme-tables.js';

console.log(tiersTable() + '\n\n' + pollingTable() + '\n\n' + sourcesTableOf(new URL('../../fixtures/', import.meta.url)));
console.log('\n' + fieldsTable());
