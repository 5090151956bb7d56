import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { checkCatalog, PAID_ROUTES, PREVIEW_ROUTES, usdToAtomic } from '../src/catalog/index.js';
import { ConfigError, loadConfig, OPTIONS } from '../src/config.js';
import { fieldsTable, pollingTable, sourcesTableOf, tiersTable } from '../src/docs/readme-tables.js';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
/** The front page and the reference pages under docs/. */
const PAGES = [
  'README.md',
  'packages/client/README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const DOC = (page: string) => read(`docs/${page}.md`);

/** A heading's anchor as GitHub makes it. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');

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

test('the docs document every option, route, wire and source as the code has them', () => {
  for (const o of OPTIONS) assert.ok(DOC('configuration').includes(`| \`${o.env}\` |`), o.env);
  for (const r of PAID_ROUTES) assert.ok(read('README.md').includes(`\`${r.path}\``) && DOC('routes').includes(`\`${r.path}\``), r.path);
  // Regenerate with `node dist/scripts/readme-tables.js` after a catalogue change.
  assert.ok(DOC('sources').includes(tiersTable()), 'docs/sources.md tiers table matches the catalogue');
  assert.ok(DOC('sources').includes(pollingTable()), 'docs/sources.md polling table matches the catalogue');
  assert.ok(DOC('sources').includes(sourcesTableOf(new URL('fixtures/', ROOT))), 'docs/sources.md sources table matches the catalogue and the real captures');
  assert.ok(DOC('routes').includes(fieldsTable()), "docs/routes.md's data fields table matches the catalogue");
});

test('the README is a front page: short, with the test command CI runs, and every link in it and in docs/ leads somewhere', () => {
  const readme = read('README.md');
  assert.ok(readme.split('\n').length <= 220, `README.md has ${readme.split('\n').length} lines`);
  assert.ok(readme.includes('npm test'));
  const broken: string[] = [];
  for (const page of PAGES) {
    for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue; // http(s), mailto
      const [path, anchor] = target!.split('#');
      const file = path ? new URL(path, new URL(page, ROOT)) : new URL(page, ROOT);
      if (!existsSync(file)) {
        broken.push(`${page}: ${target} (no such file)`);
        continue;
      }
      if (!anchor || !file.pathname.endsWith('.md')) continue;
      const anchors = [...readFileSync(file, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!));
      if (!anchors.includes(anchor)) broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test('the catalogue holds the contract: 22 paid routes, 21 previews, consistent data', () => {
  checkCatalog();
  assert.equal(PAID_ROUTES.length, 22);
  assert.equal(PREVIEW_ROUTES.length, 21);
  assert.equal(usdToAtomic('0.005'), '5000');
  assert.equal(usdToAtomic('0.01'), '10000');
  assert.equal(usdToAtomic('1.5'), '1500000');
});

test('every install script in the lock file has a decision in allowScripts, so npm ci warns of none', () => {
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
  const allow = (JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
  const withScripts = new Set(
    Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
  );
  assert.ok(withScripts.has('secp256k1'), 'the lock file names the packages with install scripts');
  assert.deepEqual([...withScripts].filter((name) => !(name in allow)).sort(), [], 'packages whose install script has no decision');
  assert.equal(allow.secp256k1, true, 'the native signature check may build where no prebuilt binary fits');
  assert.ok(read('docs/deployment.md').includes('**Native modules.**'), 'the decisions are documented');
});

test('SHARED_PORT: only in replica mode, with a REPLICA_ID of its own', () => {
  assert.throws(() => loadConfig({ SHARED_PORT: '1' }), /SHARED_PORT needs replica mode \(REDIS_URL\)/);
  assert.throws(() => loadConfig({ SHARED_PORT: '1', REDIS_URL: 'redis://127.0.0.1:6379' }), /needs a REPLICA_ID/);
  assert.throws(() => loadConfig({ SHARED_PORT: 'yes', REDIS_URL: 'redis://127.0.0.1:6379', REPLICA_ID: 'a' }), /SHARED_PORT must be 0 or 1/);
  assert.equal(loadConfig({ SHARED_PORT: '1', REDIS_URL: 'redis://127.0.0.1:6379', REPLICA_ID: 'a' }).redis?.sharedPort, true);
  assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redis?.sharedPort, false);
});
