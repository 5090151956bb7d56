/**
 * Builds the payment core from the configuration: the store (the journal in DATA_DIR, or
 * Redis in replica mode, loaded only then), the settler (the operator's wallet when
 * SETTLER_PRIVATE_KEY is set, the facilitator otherwise), and the chain reader when
 * BASE_RPC_URL is set. Pending payments the store holds are settled in the background.
 */
import { join } from 'node:path';
import type { Config } from '../config.js';
import { log } from '../log.js';
import type { ChainReader } from './chain.js';
import { FailureBudget } from './failure-budget.js';
import { LocalStore } from './local-store.js';
import { Payments } from './payments.js';
import type { Settler } from './settler.js';

export interface PaymentsSetup {
  payments: Payments;
  /** What the start-up check found wrong with the settler (payments still try). */
  settlerProblem: string | null;
}

export async function setupPayments(config: Readonly<Config>): Promise<PaymentsSetup> {
  const s = config.settlement;
  const timeoutMs = s.settleTimeoutSec * 1000;
  // viem, a quarter of a second of every start, is loaded only by configurations that read
  // the chain (BASE_RPC_URL) or settle with the operator's wallet.
  let chain: ChainReader | null = null;
  if (s.rpcUrl) chain = new (await import('./chain.js')).ChainReader(s.rpcUrl, timeoutMs);
  let settler: Settler;
  if (s.settlerKey && chain) {
    const { WalletSettler } = await import('./settlers/wallet.js');
    const wallet = new WalletSettler(s.settlerKey, s.rpcUrl!, timeoutMs, chain);
    log.info('settling with the operator wallet', { address: wallet.address });
    settler = wallet;
  } else {
    // Loaded here: its HTTP client (undici) is not needed on a start that settles otherwise.
    const { FacilitatorSettler } = await import('./settlers/facilitator.js');
    settler = new FacilitatorSettler(s.facilitatorUrl!, timeoutMs, chain);
    log.info('settling through a facilitator', { url: s.facilitatorUrl });
  }
  const settlerProblem = await settler.check();
  if (settlerProblem) log.error(`settlement check failed: ${settlerProblem}. Paid calls are still verified; settlements retry until it recovers.`);

  const r = config.redis;
  const store = r
    ? await (await import('./redis-store.js')).RedisStore.open({ url: r.url, prefix: r.prefix, consumer: r.replicaId, claimIdleMs: r.takeoverMs, journalDays: r.journalDays })
    : await LocalStore.open(join(config.dataDir, 'journal'), config.journal);
  const payments = new Payments({
    store,
    settler,
    mode: s.mode,
    optimisticMaxUnsettled: s.optimisticMaxUnsettled,
    optimisticRelease: s.optimisticRelease,
    settleTimeoutMs: timeoutMs,
    failures: new FailureBudget(config.failedPayments.burst, config.failedPayments.perMinute),
    ...(chain ? { balance: (payer: string) => chain.balanceOf(payer) } : {}),
  });
  return { payments, settlerProblem };
}
