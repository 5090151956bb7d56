/**
 * The EIP-712 types of an EIP-3009 TransferWithAuthorization, in the form signers (viem)
 * take. A module of its own, free of imports, so the client kit signs with the server's one
 * definition without loading the server's signature recovery (a native module).
 */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;
