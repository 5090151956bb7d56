/** The committed devnet contract artifact is what the Solidity sources compile to. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { compileContracts, contractsDir } from '../scripts/build-contracts.js';

test('contracts/artifacts.json matches contracts/*.sol (run npm run build:contracts after a change)', () => {
  const committed = JSON.parse(readFileSync(join(contractsDir(), 'artifacts.json'), 'utf8'));
  assert.deepEqual(JSON.parse(JSON.stringify(compileContracts())), committed);
});
