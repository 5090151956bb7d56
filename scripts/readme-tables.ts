/** Prints the README's catalogue tables (see src/docs/readme-tables.ts). */
import { sourcesTable, tiersTable } from '../src/docs/readme-tables.js';

console.log(tiersTable() + '\n\n' + sourcesTable());
