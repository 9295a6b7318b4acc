// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

import {IClearingHouse} from "../interfaces/IClearingHouse.sol";
import {SumTree} from "./SumTree.sol";

/// @title CreditCheck
/// @notice Account summaries of a cycle's `debitsRoot` and the proof that a guarantee is credited to its
/// recipient (docs/clearing.md "Credits bound to guarantees"). One definition for the ClearingHouse's answers
/// and claims and the Vault's `releaseListedReserve`; the SDK's twin is sdk/debit-tree.ts.
library CreditCheck {
    /// @notice The StandardMerkleTree leaf hash of `account`'s summary in `asset`: the double keccak of
    /// `abi.encode(account, asset, sumRoot, total, depth, inRoot, inTotal, inDepth)`.
    function summaryLeaf(
        address account,
        address asset,
        IClearingHouse.DebitSummary calldata s
    ) internal pure returns (bytes32) {
        return
            keccak256(
                bytes.concat(
                    keccak256(
                        abi.encode(
                            account,
                            asset,
                            s.sumRoot,
                            s.total,
                            s.depth,
                            s.inRoot,
                            s.inTotal,
                            s.inDepth
                        )
                    )
                )
            );
    }

    /// @notice Whether `s` is `account`'s summary in `asset` under `debitsRoot` (depths and totals in range).
    function isSummary(
        bytes32 debitsRoot,
        address account,
        address asset,
        IClearingHouse.DebitSummary calldata s,
        bytes32[] calldata proof
    ) internal pure returns (bool) {
        return
            s.depth <= SumTree.MAX_DEPTH &&
            s.inDepth <= SumTree.MAX_DEPTH &&
            s.total <= type(uint128).max &&
            s.inTotal <= type(uint128).max &&
            MerkleProof.verifyCalldata(proof, debitsRoot, summaryLeaf(account, asset, s));
    }

    /// @notice Whether the node `(leafHash, amount)` sits in `recipient`'s incoming tree in `asset` under
    /// `debitsRoot`, as `p` says.
    function isCredited(
        bytes32 debitsRoot,
        address recipient,
        address asset,
        bytes32 leafHash,
        uint256 amount,
        IClearingHouse.CreditProof calldata p
    ) internal pure returns (bool) {
        if (!isSummary(debitsRoot, recipient, asset, p.summary, p.summaryProof)) return false;
        if (p.path.length != p.summary.inDepth || p.index >> p.path.length != 0) return false;
        SumTree.Node memory node = SumTree.Node(leafHash, amount);
        for (uint256 level = 0; level < p.path.length; ++level) {
            SumTree.Node memory sibling = p.path[level];
            node = (p.index >> level) & 1 == 0
                ? SumTree.parent(node, sibling)
                : SumTree.parent(sibling, node);
        }
        return node.hash == p.summary.inRoot && node.sum == p.summary.inTotal;
    }
}
