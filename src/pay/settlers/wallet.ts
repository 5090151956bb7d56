/**
 * Self-settlement with the operator's wallet (`SETTLER_PRIVATE_KEY` on `BASE_RPC_URL`): the
 * service calls USDC's `transferWithAuthorization` itself and pays the gas.
 *
 * Transactions leave the wallet one at a time (simulate, then send), so account nonces never
 * collide and a failed simulation leaves no gap; receipts are awaited outside that queue, so
 * a slow block does not hold up the next payment.
 */
import { createWalletClient, http, parseSignature, type WalletClient } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { baseChain, USDC_ABI, type ChainReader } from '../chain.js';
import { USDC_BASE } from '../offer.js';
import type { PaymentToSettle, SettleResult, Settler } from '../settler.js';
import { shortMessage } from './facilitator.js';

/** Revert reasons of USDC's EIP-3009 functions → x402 codes. */
const REVERTS: [RegExp, string][] = [
  [/authorization is expired/i, 'invalid_exact_evm_payload_authorization_valid_before'],
  [/authorization is not yet valid/i, 'invalid_exact_evm_payload_authorization_valid_after'],
  [/exceeds balance|insufficient/i, 'insufficient_funds'],
  [/invalid signature/i, 'invalid_exact_evm_payload_signature'],
];
const USED = /authorization is used|used or canceled/i;

export class WalletSettler implements Settler {
  readonly kind = 'wallet' as const;
  private readonly account: PrivateKeyAccount;
  private readonly wallet: WalletClient;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    privateKey: `0x${string}`,
    rpcUrl: string,
    timeoutMs: number,
    private readonly chain: ChainReader,
  ) {
    this.account = privateKeyToAccount(privateKey);
    this.wallet = createWalletClient({ account: this.account, chain: baseChain(rpcUrl), transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
  }

  get address(): string {
    return this.account.address;
  }

  async check(): Promise<string | null> {
    try {
      const id = await this.chain.client.getChainId();
      if (id !== 8453) return `BASE_RPC_URL serves chain ${id}, not Base (8453)`;
      const gas = await this.chain.client.getBalance({ address: this.account.address });
      return gas === 0n ? `settler wallet ${this.account.address} has no ETH for gas` : null;
    } catch (err) {
      return `BASE_RPC_URL is unreachable: ${shortMessage((err as Error).message)}`;
    }
  }

  async settle(payment: PaymentToSettle, opts: { signal: AbortSignal }, onSubmitted?: (tx: string) => void): Promise<SettleResult> {
    const auth = payment.payload.payload.authorization;
    const aborted = new Promise<SettleResult>((resolve) => {
      if (opts.signal.aborted) resolve({ kind: 'unknown', message: 'settlement timed out' });
      opts.signal.addEventListener('abort', () => resolve({ kind: 'unknown', message: 'settlement timed out' }), { once: true });
    });
    const run = async (): Promise<SettleResult> => {
      try {
        if (await this.chain.authorizationUsed(auth.from, auth.nonce)) return { kind: 'used' };
      } catch (err) {
        return { kind: 'unknown', message: `nonce check failed: ${shortMessage((err as Error).message)}` };
      }
      const { v, r, s, yParity } = parseSignature(payment.payload.payload.signature as `0x${string}`);
      const args = [
        auth.from as `0x${string}`,
        auth.to as `0x${string}`,
        BigInt(auth.value),
        BigInt(auth.validAfter),
        BigInt(auth.validBefore),
        auth.nonce as `0x${string}`,
        Number(v ?? BigInt(yParity + 27)),
        r,
        s,
      ] as const;
      const sent = await this.serially(async (): Promise<SettleResult | `0x${string}`> => {
        if (opts.signal.aborted) return { kind: 'unknown', message: 'timed out waiting to send' };
        try {
          const { request } = await this.chain.client.simulateContract({
            account: this.account,
            address: USDC_BASE,
            abi: USDC_ABI,
            functionName: 'transferWithAuthorization',
            args,
          });
          return await this.wallet.writeContract(request);
        } catch (err) {
          return revertResult(err);
        }
      });
      if (typeof sent !== 'string') return sent;
      onSubmitted?.(sent);
      try {
        const receipt = await this.chain.client.waitForTransactionReceipt({ hash: sent, pollingInterval: 250, timeout: 60_000 });
        if (receipt.status === 'success') return { kind: 'settled', tx: sent };
        const used = await this.chain.authorizationUsed(auth.from, auth.nonce).catch(() => false);
        return used ? { kind: 'used' } : { kind: 'failed', reason: 'invalid_transaction_state', message: `transaction ${sent} reverted` };
      } catch (err) {
        return { kind: 'unknown', message: `no receipt yet: ${shortMessage((err as Error).message)}`, tx: sent };
      }
    };
    return Promise.race([run(), aborted]);
  }

  /** Runs `fn` after every earlier call has finished: one transaction leaves the wallet at a time. */
  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  async close(): Promise<void> {
    await this.queue;
  }
}

function revertResult(err: unknown): SettleResult {
  const text = String((err as { shortMessage?: string }).shortMessage ?? '') + ' ' + String((err as Error)?.message ?? err);
  if (USED.test(text)) return { kind: 'used' };
  for (const [re, reason] of REVERTS) if (re.test(text)) return { kind: 'failed', reason, message: shortMessage(text.trim()) };
  if (/revert/i.test(text)) return { kind: 'failed', reason: 'invalid_transaction_state', message: shortMessage(text.trim()) };
  // Not a revert: the RPC did not answer. Nothing was sent, but the payment may still settle later.
  return { kind: 'unknown', message: shortMessage(text.trim()) };
}
