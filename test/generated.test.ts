/** Generated files are what their sources produce: the devnet contracts' artifact, the client's types. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compileContracts, contractsDir } from '../scripts/build-contracts.js';
import { clientTypesSource } from '../scripts/client-types.js';

test('contracts/artifacts.json matches contracts/*.sol (run npm run build:contracts after a change)', () => {
  const committed = JSON.parse(readFileSync(join(contractsDir(), 'artifacts.json'), 'utf8'));
  assert.deepEqual(JSON.parse(JSON.stringify(compileContracts())), committed);
});

test('src/client/wires.gen.ts matches the catalogue (run npm run build:client-types after a change)', () => {
  const committed = readFileSync(fileURLToPath(new URL('../../src/client/wires.gen.ts', import.meta.url)), 'utf8');
  assert.equal(committed, clientTypesSource());
});
