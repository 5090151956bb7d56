/**
 * Prints a PAYMENT-SIGNATURE header value for one call of a paid route, for curl:
 *
 *   curl -H "PAYMENT-SIGNATURE: $(node dist/scripts/sign-payment.js URL)" URL
 *
 * The client module does the work: it asks URL for its offer (the 402), checks it against
 * the service's /.well-known/x402 price list and the limits, and signs an EIP-3009
 * authorization for exactly that price with WALLET_PRIVATE_KEY, or with the first payer of
 * the devnet file (DEVNET_FILE, default ./devnet.json). Each call needs a fresh signature:
 * an authorization buys one request.
 */
import { readFileSync } from 'node:fs';
import { WiresClient } from '../src/client/client.js';

const url = process.argv[2];
if (!url) {
  process.stderr.write('usage: sign-payment URL\n');
  process.exit(2);
}
const privateKey = process.env.WALLET_PRIVATE_KEY || (JSON.parse(readFileSync(process.env.DEVNET_FILE || './devnet.json', 'utf8')) as { payers: { privateKey: string }[] }).payers[0]!.privateKey;
try {
  const client = new WiresClient({ url: new URL(url).origin, privateKey });
  process.stdout.write((await client.paymentHeader(url)) + '\n');
} catch (err) {
  process.stderr.write(`sign-payment: ${(err as Error).message}\n`);
  process.exit(1);
}
