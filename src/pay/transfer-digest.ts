/**
 * The EIP-712 digest of an EIP-3009 `TransferWithAuthorization`: what a payer signs and what
 * the service recovers the signer from. A module of its own, free of the native signature
 * recovery, so the client package signs over the very digest the service verifies.
 *
 * The service computes it on the serving thread for every fresh authorization, so the type
 * hashes are computed once and the digest is hashed from one reused buffer.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const hex = (h: string) => Buffer.from(h.startsWith('0x') ? h.slice(2) : h, 'hex');

const DOMAIN_TYPEHASH = keccak_256(utf8('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'));
export const TRANSFER_TYPEHASH = keccak_256(utf8('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)'));

export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}

export function domainSeparator(d: Eip712Domain): Uint8Array {
  const buf = new Uint8Array(5 * 32);
  buf.set(DOMAIN_TYPEHASH, 0);
  buf.set(keccak_256(utf8(d.name)), 32);
  buf.set(keccak_256(utf8(d.version)), 64);
  writeUint(buf, 96, BigInt(d.chainId));
  buf.set(hex(d.verifyingContract), 128 + 12);
  return keccak_256(buf);
}

export interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

/** Writes a uint256 big-endian into 32 bytes at `offset`. */
function writeUint(buf: Uint8Array, offset: number, n: bigint): void {
  let v = n;
  for (let i = offset + 31; i >= offset; i--) {
    buf[i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/** Writes 0x-hex of exactly `bytes` bytes, right-aligned in a 32-byte word. */
function writeHex(buf: Uint8Array, offset: number, h: string, bytes: number): void {
  buf.fill(0, offset, offset + 32 - bytes);
  buf.set(hex(h), offset + 32 - bytes);
}

// Reused for every digest: the serving thread is single-threaded and nothing awaits in between.
const struct = new Uint8Array(7 * 32);
const envelope = new Uint8Array(2 + 32 + 32);
envelope[0] = 0x19;
envelope[1] = 0x01;
struct.set(TRANSFER_TYPEHASH, 0);

/** The EIP-712 digest of a TransferWithAuthorization under the given domain separator. */
export function authorizationDigest(separator: Uint8Array, a: Authorization): Uint8Array {
  writeHex(struct, 32, a.from, 20);
  writeHex(struct, 64, a.to, 20);
  writeUint(struct, 96, BigInt(a.value));
  writeUint(struct, 128, BigInt(a.validAfter));
  writeUint(struct, 160, BigInt(a.validBefore));
  writeHex(struct, 192, a.nonce, 32);
  envelope.set(separator, 2);
  envelope.set(keccak_256(struct), 34);
  return keccak_256(envelope);
}
