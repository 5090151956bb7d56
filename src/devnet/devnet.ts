/**
 * A local Base for tests and the demo, on loopback only: anvil with chain id 8453, the
 * project's EIP-3009 token at the Base USDC address (EIP-712 domain `USD Coin`/`2`), a
 * Multicall at Multicall3's address, funded payers, and a real x402 facilitator
 * (@x402/core + @x402/evm) served over HTTP. Payments signed for Base mainnet USDC verify and
 * settle here unchanged.
 *
 * Accounts are anvil's deterministic ones: 0 is the facilitator's wallet, 1 the operator's
 * settler wallet (self-settlement), 2 the payee, 3… the payers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createPublicClient, createWalletClient, http, publicActions, toHex, type Hex } from 'viem';
import { mnemonicToAccount, nonceManager, privateKeyToAccount } from 'viem/accounts';
import { baseChain } from '../pay/chain.js';
import { NETWORK, USDC_BASE } from '../pay/offer.js';
import { CHAIN_ID } from '../pay/verify.js';
import type { AddressInfo } from 'node:net';
import { freePort } from '../free-port.js';

export const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';
const MNEMONIC = 'test test test test test test test test test test test junk';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const ANVIL = join(ROOT, 'node_modules', '@foundry-rs', 'anvil-linux-amd64', 'bin', 'anvil');
const MAX_BODY = 64 * 1024;

export interface Account {
  address: `0x${string}`;
  privateKey: `0x${string}`;
}

export interface DevnetInfo {
  rpcUrl: string;
  facilitatorUrl: string;
  chainId: number;
  usdc: string;
  payTo: `0x${string}`;
  payers: Account[];
  settler: Account;
}

export interface Devnet extends DevnetInfo {
  info(): DevnetInfo;
  stop(): Promise<void>;
}

export interface DevnetOptions {
  payers?: number;
  /** USDC minted to each payer. */
  fundUsd?: number;
  /** Seconds between blocks; 0 mines each transaction at once. */
  blockTime?: number;
  /** anvil's port on 127.0.0.1; a free one when omitted (anvil itself cannot take port 0). */
  port?: number;
  /** The facilitator's port on 127.0.0.1; a free one when omitted. */
  facilitatorPort?: number;
}

function account(index: number): Account {
  const hd = mnemonicToAccount(MNEMONIC, { addressIndex: index });
  return { address: hd.address, privateKey: toHex(hd.getHdKey().privateKey!) };
}

function loadArtifacts(): Record<'DevUSDC' | 'Multicall', { deployedBytecode: Hex }> {
  return JSON.parse(readFileSync(join(ROOT, 'contracts', 'artifacts.json'), 'utf8'));
}

/**
 * Runs anvil ("$@") until this shell's stdin reaches its end (the parent closed it or died)
 * or the shell gets SIGTERM/SIGINT, then stops anvil and exits with its status. (A
 * background job's stdin is /dev/null unless redirected: hence the pipe passed as fd 3.)
 */
const ANVIL_WATCHDOG = `
exec 3<&0
"$@" </dev/null 3<&- & a=$!
(cat <&3 >/dev/null; kill $a 2>/dev/null) &
trap 'kill $a 2>/dev/null' TERM INT
wait $a; s=$?
while kill -0 $a 2>/dev/null; do wait $a; s=$?; done
exit $s`;

async function startAnvil(blockTime: number, accounts: number, fixedPort?: number): Promise<{ child: ChildProcess; rpcUrl: string }> {
  const port = fixedPort ?? (await freePort());
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(CHAIN_ID), '--accounts', String(accounts), '--silent'];
  if (blockTime > 0) args.push('--block-time', String(blockTime));
  // anvil runs under a watchdog that holds a pipe from this process: when this process ends
  // in any way, SIGKILL included, the pipe closes and the watchdog stops anvil.
  const child = spawn('/bin/sh', ['-c', ANVIL_WATCHDOG, 'anvil-watchdog', ANVIL, ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const rpcUrl = `http://127.0.0.1:${port}`;
  const client = createPublicClient({ chain: baseChain(rpcUrl), transport: http(rpcUrl, { retryCount: 0, timeout: 1000 }) });
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}: ${stderr.trim()}`);
    try {
      if ((await client.getChainId()) === CHAIN_ID) return { child, rpcUrl };
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      child.stdin!.end();
      throw new Error(`anvil did not answer within 20 s: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The real x402 facilitator, over HTTP: GET /supported, POST /verify, POST /settle. */
function facilitatorServer(rpcUrl: string, key: Hex): Server {
  // The nonce manager keeps concurrent settlements from colliding on the account nonce.
  const wallet = privateKeyToAccount(key, { nonceManager });
  // The chain mines each transaction at once: poll for receipts every 50 ms, not viem's default 4 s.
  const client = createWalletClient({ account: wallet, chain: baseChain(rpcUrl), transport: http(rpcUrl), pollingInterval: 50 }).extend(publicActions);
  const signer = toFacilitatorEvmSigner(Object.assign(client, { address: wallet.address }) as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]);
  const facilitator = new x402Facilitator().register(NETWORK, new ExactEvmScheme(signer));

  return createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
    };
    if (req.method === 'GET' && req.url === '/supported') return reply(200, facilitator.getSupported());
    if (req.method !== 'POST' || (req.url !== '/verify' && req.url !== '/settle')) return reply(404, { error: 'not found' });
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      if (tooLarge) return;
      size += c.length;
      if (size <= MAX_BODY) return void chunks.push(c);
      tooLarge = true;
      chunks.length = 0;
      res.setHeader('connection', 'close');
      reply(413, { error: `body exceeds ${MAX_BODY} bytes` });
    });
    req.on('end', async () => {
      if (tooLarge) return;
      let body: { paymentPayload?: unknown; paymentRequirements?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(400, { error: 'body is not JSON' });
      }
      try {
        const args = [body.paymentPayload, body.paymentRequirements] as Parameters<typeof facilitator.verify>;
        reply(200, req.url === '/verify' ? await facilitator.verify(...args) : await facilitator.settle(...args));
      } catch (err) {
        reply(500, { error: String((err as Error)?.message ?? err).split('\n')[0] });
      }
    });
  });
}

export async function startDevnet(opts: DevnetOptions = {}): Promise<Devnet> {
  const payerCount = opts.payers ?? 3;
  const { child, rpcUrl } = await startAnvil(opts.blockTime ?? 0, 3 + payerCount, opts.port);
  const stopAnvil = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 2000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      // Either one stops anvil: the closed pipe (the watchdog's own path) or the signal.
      child.stdin!.end();
      child.kill('SIGTERM');
    });

  try {
    const artifacts = loadArtifacts();
    const client = createPublicClient({ chain: baseChain(rpcUrl), transport: http(rpcUrl) });
    const rpc = (method: string, params: unknown[]) => client.request({ method: method as never, params: params as never });
    await rpc('anvil_setCode', [USDC_BASE, artifacts.DevUSDC.deployedBytecode]);
    await rpc('anvil_setCode', [MULTICALL3, artifacts.Multicall.deployedBytecode]);

    const facilitatorKey = account(0);
    const settler = account(1);
    const payTo = account(2).address;
    const payers = Array.from({ length: payerCount }, (_, i) => account(3 + i));
    const funder = createWalletClient({ account: privateKeyToAccount(facilitatorKey.privateKey), chain: baseChain(rpcUrl), transport: http(rpcUrl) });
    const mintAbi = [
      {
        type: 'function',
        name: 'mint',
        stateMutability: 'nonpayable',
        inputs: [
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
        ],
        outputs: [],
      },
    ] as const;
    const amount = BigInt(Math.round((opts.fundUsd ?? 100) * 1e6));
    for (const p of payers) {
      const hash = await funder.writeContract({ address: USDC_BASE, abi: mintAbi, functionName: 'mint', args: [p.address, amount] });
      await client.waitForTransactionReceipt({ hash });
    }

    const server = facilitatorServer(rpcUrl, facilitatorKey.privateKey);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.facilitatorPort ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const facilitatorUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const info: DevnetInfo = { rpcUrl, facilitatorUrl, chainId: CHAIN_ID, usdc: USDC_BASE, payTo, payers, settler };
    let stopped: Promise<void> | null = null;
    return {
      ...info,
      info: () => info,
      stop: () =>
        (stopped ??= (async () => {
          server.closeAllConnections();
          await new Promise((r) => server.close(r));
          await stopAnvil();
        })()),
    };
  } catch (err) {
    await stopAnvil();
    throw err;
  }
}
