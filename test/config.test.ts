import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { checkCatalog, PAID_ROUTES, PREVIEW_ROUTES, usdToAtomic } from '../src/catalog/index.js';
import { ConfigError, loadConfig, OPTIONS } from '../src/config.js';
import { pollingTable, sourcesTableOf, tiersTable } from '../src/docs/readme-tables.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

test('defaults apply when nothing is set', () => {
  const c = loadConfig({});
  assert.equal(c.port, 4021);
  assert.equal(c.host, '0.0.0.0');
  assert.equal(c.payTo, null);
  assert.equal(c.paymentsProblem, 'PAY_TO_ADDRESS is not set');
  assert.equal(c.publicUrl, 'http://localhost:4021');
  assert.ok(Object.isFrozen(c));
});

test('bad values are refused with the variable named', () => {
  assert.throws(
    () => loadConfig({ PORT: '70000' }),
    (e: Error) => e instanceof ConfigError && /PORT/.test(e.message),
  );
  assert.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL/);
  assert.throws(() => loadConfig({ PUBLIC_URL: 'not a url' }), /PUBLIC_URL/);
  assert.throws(() => loadConfig({ PAYMENT_TIMEOUT_SEC: '1' }), /PAYMENT_TIMEOUT_SEC/);
});

test('an invalid or zero PAY_TO_ADDRESS disables payments with a reason', () => {
  assert.match(loadConfig({ PAY_TO_ADDRESS: '0x123' }).paymentsProblem!, /not a valid EVM address/);
  assert.match(loadConfig({ PAY_TO_ADDRESS: '0x' + '0'.repeat(40) }).paymentsProblem!, /zero address/);
  assert.equal(loadConfig({ PAY_TO_ADDRESS: '0x' + 'ab'.repeat(20) }).payTo, '0x' + 'ab'.repeat(20));
});

test('the README documents every option, route, wire and source as the code has them', () => {
  for (const o of OPTIONS) assert.ok(README.includes(`| \`${o.env}\` |`), o.env);
  for (const r of PAID_ROUTES) assert.ok(README.includes(`\`${r.path}\``), r.path);
  // Regenerate with `node dist/scripts/readme-tables.js` after a catalogue change.
  assert.ok(README.includes(tiersTable()), 'README tiers table matches the catalogue');
  assert.ok(README.includes(pollingTable()), 'README polling table matches the catalogue');
  assert.ok(README.includes(sourcesTableOf(new URL('../../fixtures/', import.meta.url))), 'README sources table matches the catalogue and the real captures');
});

test('the catalogue holds the contract: 22 paid routes, 21 previews, consistent data', () => {
  checkCatalog();
  assert.equal(PAID_ROUTES.length, 22);
  assert.equal(PREVIEW_ROUTES.length, 21);
  assert.equal(usdToAtomic('0.005'), '5000');
  assert.equal(usdToAtomic('0.01'), '10000');
  assert.equal(usdToAtomic('1.5'), '1500000');
});
