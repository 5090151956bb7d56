// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// The one Multicall3 function x402's EVM facilitator reads through (at Multicall3's usual
// address, which anvil leaves empty). Without it every failed simulation is reported as
// "simulation failed" instead of its reason (used nonce, insufficient balance).
contract Multicall {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) external returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(ok, "Multicall: call failed");
            results[i] = Result(ok, data);
        }
    }
}
