/**
 * The client's wallet: an address from a private key, and the signature of an EIP-3009
 * TransferWithAuthorization, which is all an x402 `exact` payment on EVM signs. The digest is
 * the service's own (pay/transfer-digest.ts); the key signs it with the audited
 * @noble/curves rather than a general wallet library (viem alone installs over 60 MB), so the
 * client package stays small. Tests compare every address and signature with viem's.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { type Authorization, authorizationDigest, domainSeparator, type Eip712Domain } from '../pay/transfer-digest.js';

export type Hex = `0x${string}`;

const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const MAX_UINT256 = (1n << 256n) - 1n;

function bytesOf(hex: string, bytes: number, what: string): Uint8Array {
  if (!new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(hex)) throw new TypeError(`${what} must be 0x and ${bytes * 2} hex digits`);
  return Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
}

/** The digest writes fields as given: a malformed one would sign something else, so none passes. */
function check(domain: Eip712Domain, a: Authorization): void {
  bytesOf(domain.verifyingContract, 20, 'verifyingContract');
  for (const field of ['from', 'to'] as const) bytesOf(a[field], 20, field);
  bytesOf(a.nonce, 32, 'nonce');
  for (const field of ['value', 'validAfter', 'validBefore'] as const) {
    const n = /^\d{1,78}$/.test(a[field]) ? BigInt(a[field]) : -1n;
    if (n < 0n || n > MAX_UINT256) throw new RangeError(`${field} is not a uint256`);
  }
}

/** An EIP-55 checksummed address. */
function checksum(lower: string): Hex {
  const hash = toHex(keccak_256(new TextEncoder().encode(lower)));
  let out = '0x';
  for (let i = 0; i < 40; i++) out += Number.parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  return out as Hex;
}

/** A private key that signs locally; the key itself is never exposed by the object. */
export class Wallet {
  readonly address: Hex;
  readonly #key: Uint8Array;

  constructor(privateKey: string) {
    this.#key = bytesOf(privateKey, 32, 'the private key');
    if (!secp256k1.utils.isValidSecretKey(this.#key)) throw new TypeError('the private key is not a valid secp256k1 key');
    const pub = secp256k1.getPublicKey(this.#key, false);
    this.address = checksum(toHex(keccak_256(pub.subarray(1))).slice(24));
  }

  /** The 65-byte `r ‖ s ‖ v` signature (v = 27 or 28) that EIP-3009 contracts recover. */
  signTransfer(domain: Eip712Domain, authorization: Authorization): Hex {
    check(domain, authorization);
    const digest = authorizationDigest(domainSeparator(domain), authorization);
    const sig = secp256k1.sign(digest, this.#key, { prehash: false, format: 'recovered' });
    // noble's recovered format is recovery ‖ r ‖ s.
    return `0x${toHex(sig.subarray(1))}${(27 + sig[0]!).toString(16)}`;
  }
}
