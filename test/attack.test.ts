/**
 * The failed-payment budget: a client address that keeps presenting payments that fail is
 * answered 429 with Retry-After, before any signature work, until its budget refills; other
 * addresses and valid payers are not touched. Behind the proxy the address is the
 * X-Real-IP it sets, which the service believes only from a loopback peer.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { encodePayment, signPayment } from './helpers/payments.js';
import { startTestService, type TestService } from './helpers/service.js';

let svc: TestService;
before(async () => {
  // Optimistic: a valid payment is answered at once although nothing can settle here.
  // Five failures in a burst; one more every second.
  svc = await startTestService({ SETTLEMENT: 'optimistic', FAILED_PAYMENTS_BURST: '5', FAILED_PAYMENTS_PER_MIN: '60' });
});
after(async () => {
  await svc?.stop();
});

const forged = async () => encodePayment((await signPayment({ amount: '5000', signer: privateKeyToAccount(generatePrivateKey()) })).payload);
const pay = (header: string, from: string) => svc.get('/cve/latest', { headers: { 'PAYMENT-SIGNATURE': header, 'X-Real-IP': from } });
async function outcomes(): Promise<Record<string, number>> {
  const text = await (await svc.get('/metrics')).text();
  return Object.fromEntries([...text.matchAll(/^wires_payments_total\{outcome="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

test('after its budget of failures an address gets 429 with Retry-After, unverified; others and valid payers are served; the budget refills', async () => {
  const attacker = '203.0.113.7';
  const headers = await Promise.all(Array.from({ length: 12 }, forged));
  // Refused with the reason until the budget is spent (five, plus what refilled meanwhile).
  let refused = 0;
  for (; refused < 10; refused++) {
    const res = await pay(headers[refused]!, attacker);
    if (res.status === 429) break;
    assert.equal(res.status, 402);
    assert.equal(((await res.json()) as any).error.code, 'invalid_exact_evm_payload_signature');
  }
  assert.ok(refused >= 5 && refused < 10, `${refused} failures before the limit`);
  const before = await outcomes();
  const limited = await pay(headers[10]!, attacker);
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  const body = (await limited.json()) as any;
  assert.equal(body.error.code, 'too_many_failed_payments');
  assert.equal(body.articles, undefined);
  const afterLimit = await outcomes();
  assert.equal(afterLimit.invalid_exact_evm_payload_signature, before.invalid_exact_evm_payload_signature, 'refused unread: no signature was checked');
  assert.equal(afterLimit.too_many_failed_payments, (before.too_many_failed_payments ?? 0) + 1);

  // Another address is not affected; a valid payer is served.
  assert.equal((await pay(headers[11]!, '198.51.100.9')).status, 402);
  const valid = encodePayment((await signPayment({ amount: '5000' })).payload);
  assert.equal((await pay(valid, '198.51.100.10')).status, 200);

  // After Retry-After, the address may present a payment again.
  await new Promise((r) => setTimeout(r, Number(limited.headers.get('retry-after')) * 1000 + 200));
  assert.equal((await pay(await forged(), attacker)).status, 402);
});

test('a remote peer cannot pick its address: X-Real-IP counts only from a loopback peer', async () => {
  // Every test request comes from 127.0.0.1, a loopback peer, so X-Real-IP is believed;
  // without it the address is the peer's own. Spend 127.0.0.1's budget, then show that a
  // request naming another address through X-Real-IP is a different client.
  const direct = (h: string) => svc.get('/cve/latest', { headers: { 'PAYMENT-SIGNATURE': h } });
  let status = 0;
  for (let i = 0; i < 12 && status !== 429; i++) status = (await direct(await forged())).status;
  assert.equal(status, 429, '127.0.0.1 spent its budget');
  assert.equal((await pay(await forged(), '192.0.2.44')).status, 402, 'another address named by the loopback proxy is another client');
});

test('MCP: paid tool calls with failing payments are limited per address too', async () => {
  const call = (payment: unknown, id: number) =>
    svc
      .get('/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'X-Real-IP': '203.0.113.99' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'cve_latest', arguments: {}, _meta: { 'x402.payment': payment } } }),
      })
      .then(async (r) => ((await r.json()) as any).result);
  let limited: any;
  for (let i = 0; i < 12 && !limited; i++) {
    const result = await call(await forged(), i);
    assert.equal(result.isError, true);
    if (/^too_many_failed_payments/.test(result.content[0].text)) limited = result;
    else assert.match(JSON.stringify(result.content), /invalid_exact_evm_payload_signature/);
  }
  assert.ok(limited, 'limited after its budget');
});
