/**
 * Reads of the USDC contract over JSON-RPC (`BASE_RPC_URL`): balances for optimistic mode and
 * nonce states for resolving uncertain settlements. The chain is always given an explicit
 * RPC URL, never viem's public default.
 */
import { createPublicClient, defineChain, http, parseAbi, type Chain, type PublicClient } from 'viem';
import { USDC_BASE } from './offer.js';
import { CHAIN_ID } from './verify.js';

export const USDC_ABI = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
]);

export function baseChain(rpcUrl: string): Chain {
  return defineChain({
    id: CHAIN_ID,
    name: 'Base',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export class ChainReader {
  readonly client: PublicClient;

  constructor(rpcUrl: string, timeoutMs: number) {
    this.client = createPublicClient({ chain: baseChain(rpcUrl), transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 1 }) }) as PublicClient;
  }

  balanceOf(owner: string): Promise<bigint> {
    return this.client.readContract({ address: USDC_BASE, abi: USDC_ABI, functionName: 'balanceOf', args: [owner as `0x${string}`] });
  }

  authorizationUsed(authorizer: string, nonce: string): Promise<boolean> {
    return this.client.readContract({
      address: USDC_BASE,
      abi: USDC_ABI,
      functionName: 'authorizationState',
      args: [authorizer as `0x${string}`, nonce as `0x${string}`],
    });
  }
}
