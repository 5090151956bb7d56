import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { PAID_ROUTES, REDIRECTS, ROUTES } from '../src/catalog/index.js';
import { buildOpenApi } from '../src/docs/openapi.js';

const UTILITY = ['/health', '/sources', '/tickers', '/mcp', '/llms-full.txt', '/openapi.json', '/.well-known/x402', '/stream'];
const doc = buildOpenApi({ publicUrl: 'http://127.0.0.1:4021' }) as any;

test('the document is valid OpenAPI 3.0.3 (checked by an OpenAPI schema validator)', async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(validator.version, '3.0');
  assert.equal(doc.openapi, '3.0.3');
  assert.equal(doc.info.version, '3.0.0');
});

test('every route, redirect and utility path is described, and nothing else', () => {
  const expected = [...ROUTES.map((r) => r.path), ...REDIRECTS.keys(), ...UTILITY].sort();
  assert.deepEqual(Object.keys(doc.paths).sort(), expected);
});

test('parameters carry the catalogue enums, limits and requirements', () => {
  for (const route of ROUTES) {
    const params = doc.paths[route.path].get.parameters;
    const filter = params.find((p: any) => p.name === route.wire.filter.name);
    assert.deepEqual(filter.schema, { type: 'string', enum: route.wire.filter.values }, route.path);
    assert.equal(params.find((p: any) => p.name === 'limit').schema.maximum, route.def.maxLimit);
    const q = params.find((p: any) => p.name === 'q');
    if (route.def.q === 'none') assert.equal(q, undefined, route.path);
    else assert.equal(q.required, route.def.qRequired, route.path);
    assert.equal(params.find((p: any) => p.name === 'since').schema.pattern, '^\\d+(m|h|d)$');
  }
});

test('paid operations document the 402 with its header and their price', () => {
  for (const route of PAID_ROUTES) {
    const op = doc.paths[route.path].get;
    assert.ok(op.responses['402'].headers['PAYMENT-REQUIRED'], route.path);
    assert.equal(op['x-x402'].amount, route.def.price === '0.01' ? '10000' : '5000');
    assert.equal(op['x-x402'].network, 'eip155:8453');
    assert.match(op.description, new RegExp(`${route.def.price!.replace('.', '\\.')} USD per call`));
    assert.ok(op.parameters.some((p: any) => p.in === 'header' && p.name === 'PAYMENT-SIGNATURE'));
  }
  for (const route of ROUTES.filter((r) => r.kind === 'preview')) assert.equal(doc.paths[route.path].get.responses['402'], undefined);
});
