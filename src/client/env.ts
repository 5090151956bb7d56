/** The client as the bins configure it: WIRES_URL, WALLET_PRIVATE_KEY and the spending limits. */
import { WiresClient, WiresError } from './client.js';

function usd(name: string, fallback: number): number {
  const text = process.env[name];
  if (!text) return fallback;
  const n = Number(text);
  if (!(n >= 0) || !Number.isFinite(n)) throw new WiresError('invalid_config', `${name} must be a non-negative USD amount, got "${text}"`);
  return n;
}

export function clientFromEnv(): WiresClient {
  return new WiresClient({
    url: process.env.WIRES_URL || 'http://localhost:4021',
    ...(process.env.WALLET_PRIVATE_KEY ? { privateKey: process.env.WALLET_PRIVATE_KEY } : {}),
    maxPricePerCallUsd: usd('MAX_PRICE_PER_CALL_USD', 0.01),
    maxSpendUsd: usd('MAX_SPEND_USD', 1),
  });
}
