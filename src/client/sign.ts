/**
 * The client's wallet: an address from a private key, and the EIP-712 signature of an
 * EIP-3009 TransferWithAuthorization, which is all an x402 `exact` payment on EVM signs.
 *
 * Written on the audited @noble curves and hashes (about 2.5 MB installed) rather than a
 * general wallet library (viem alone is over 60 MB), so the client package stays small. The
 * encoding covers exactly the types the authorization and its domain use: `string`,
 * `address`, `uint256` and `bytes32`. Tests compare every signature with viem's.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../pay/transfer-types.js';

export type Hex = `0x${string}`;

export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}

export interface TransferAuthorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

type Field = { readonly name: string; readonly type: 'string' | 'address' | 'uint256' | 'bytes32' };

const DOMAIN_FIELDS: readonly Field[] = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
];
const TRANSFER_FIELDS: readonly Field[] = TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization;

const utf8 = new TextEncoder();
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

function fromHex(hex: string, bytes: number, what: string): Uint8Array {
  const digits = hex.startsWith('0x') ? hex.slice(2) : hex;
  if (!new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(digits)) throw new TypeError(`${what} must be 0x and ${bytes * 2} hex digits`);
  return Uint8Array.from(Buffer.from(digits, 'hex'));
}

/** `Name(type1 name1,type2 name2,…)`, whose keccak is the struct's type hash. */
const typeHash = (name: string, fields: readonly Field[]) => keccak_256(utf8.encode(`${name}(${fields.map((f) => `${f.type} ${f.name}`).join(',')})`));

/** One field as a 32-byte word of EIP-712's encodeData. */
function word(field: Field, value: unknown): Uint8Array {
  const out = new Uint8Array(32);
  switch (field.type) {
    case 'string':
      return keccak_256(utf8.encode(String(value)));
    case 'bytes32':
      return fromHex(String(value), 32, field.name);
    case 'address':
      out.set(fromHex(String(value), 20, field.name), 12);
      return out;
    case 'uint256': {
      const n = BigInt(value as string | number | bigint);
      if (n < 0n || n >= 1n << 256n) throw new RangeError(`${field.name} is not a uint256`);
      out.set(fromHex(n.toString(16).padStart(64, '0'), 32, field.name));
      return out;
    }
  }
}

function hashStruct(name: string, fields: readonly Field[], value: Record<string, unknown>): Uint8Array {
  const words = [typeHash(name, fields), ...fields.map((f) => word(f, value[f.name]))];
  const data = new Uint8Array(32 * words.length);
  words.forEach((w, i) => data.set(w, 32 * i));
  return keccak_256(data);
}

/** The EIP-712 digest of a TransferWithAuthorization under a token's domain. */
export function transferDigest(domain: Eip712Domain, message: TransferAuthorization): Uint8Array {
  const data = new Uint8Array(66);
  data.set([0x19, 0x01]);
  data.set(hashStruct('EIP712Domain', DOMAIN_FIELDS, { ...domain }), 2);
  data.set(hashStruct('TransferWithAuthorization', TRANSFER_FIELDS, { ...message }), 34);
  return keccak_256(data);
}

/** An EIP-55 checksummed address. */
function checksum(lower: string): Hex {
  const hash = toHex(keccak_256(utf8.encode(lower)));
  let out = '0x';
  for (let i = 0; i < 40; i++) out += Number.parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  return out as Hex;
}

/** A private key that signs locally; the key itself is never exposed by the object. */
export class Wallet {
  readonly address: Hex;
  readonly #key: Uint8Array;

  constructor(privateKey: string) {
    this.#key = fromHex(privateKey, 32, 'the private key');
    if (!secp256k1.utils.isValidSecretKey(this.#key)) throw new TypeError('the private key is not a valid secp256k1 key');
    const pub = secp256k1.getPublicKey(this.#key, false);
    this.address = checksum(toHex(keccak_256(pub.subarray(1))).slice(24));
  }

  /** The 65-byte `r ‖ s ‖ v` signature (v = 27 or 28) that EIP-3009 contracts recover. */
  signTransfer(domain: Eip712Domain, message: TransferAuthorization): Hex {
    const sig = secp256k1.sign(transferDigest(domain, message), this.#key, { prehash: false, format: 'recovered' });
    // noble's recovered format is recovery ‖ r ‖ s.
    return `0x${toHex(sig.subarray(1))}${(27 + sig[0]!).toString(16)}`;
  }
}
