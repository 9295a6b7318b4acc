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
    /// @notice Deepest summaries tree of one asset a proof may climb (2^32 accounts).
    uint256 internal constant MAX_SUMMARY_DEPTH = 32;
    /// @dev Largest sibling sum accepted: 2^128 per leaf times 2^32 leaves fits far below it.
    uint256 private constant _MAX_NODE_SUM = 1 << 200;

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

    /// @notice The net credit a summary gives its account: `inTotal - total`, 0 when not positive. The sum of
    /// these over an asset's summaries is what the summaries tree carries (see {isSummary}).
    function creditOf(IClearingHouse.DebitSummary calldata s) internal pure returns (uint256) {
        return s.inTotal > s.total ? s.inTotal - s.total : 0;
    }

    /// @notice Whether `s` is `account`'s summary in `asset` under `debitsRoot`, in an asset whose summaries'
    /// net credits add up to `assetCredit` (the cycle's committed total credit in `asset`; 0 for an asset the
    /// commit did not list). Depths and totals must be in range.
    /// @dev The summaries of one asset form a Merkle **sum** tree with sorted-pair hashing: a leaf node is
    /// `(summaryLeaf(account, asset, s), creditOf(s))`, an inner node `(keccak256(abi.encode(a.hash, a.sum,
    /// b.hash, b.sum)), a.sum + b.sum)` with `a.hash < b.hash`. Each asset's top `(asset, hash, credit)` is
    /// listed, strictly ascending by asset, and `debitsRoot = keccak256(abi.encodePacked(list))` (3 words per
    /// asset). `proof` is `[k, h_1, c_1, …, h_k, c_k]` (the k siblings, leaf level first) followed by the whole
    /// list. So no summary proves unless its asset's credits add up to the committed total: a phantom credit
    /// (an incoming guarantee no payer is charged for) needs a debit somewhere, which its account disputes or
    /// its collateral and then the bond pays (docs/clearing.md "Phantom credits").
    function isSummary(
        bytes32 debitsRoot,
        uint256 assetCredit,
        address account,
        address asset,
        IClearingHouse.DebitSummary calldata s,
        bytes32[] calldata proof
    ) internal pure returns (bool) {
        if (
            s.depth > SumTree.MAX_DEPTH ||
            s.inDepth > SumTree.MAX_DEPTH ||
            s.total > type(uint128).max ||
            s.inTotal > type(uint128).max ||
            proof.length == 0
        ) return false;
        uint256 levels = uint256(proof[0]);
        if (levels > MAX_SUMMARY_DEPTH || proof.length < 1 + 2 * levels) return false;
        bytes32 hash = summaryLeaf(account, asset, s);
        uint256 sum = creditOf(s);
        for (uint256 i = 0; i < levels; ++i) {
            bytes32 h = proof[1 + 2 * i];
            uint256 c = uint256(proof[2 + 2 * i]);
            if (c > _MAX_NODE_SUM) return false; // leaves are below 2^128: no honest node comes near
            hash = h < hash ? keccak256(abi.encode(h, c, hash, sum)) : keccak256(abi.encode(hash, sum, h, c));
            sum += c;
        }
        return sum == assetCredit && _isListedTop(debitsRoot, asset, hash, sum, proof[1 + 2 * levels:]);
    }

    /// @dev Whether `tops` is the cycle's list of asset tops (it hashes to `debitsRoot`, assets strictly
    /// ascending, each a clean address word) and lists `(asset, hash, sum)`.
    function _isListedTop(
        bytes32 debitsRoot,
        address asset,
        bytes32 hash,
        uint256 sum,
        bytes32[] calldata tops
    ) private pure returns (bool found) {
        if (tops.length % 3 != 0 || keccak256(abi.encodePacked(tops)) != debitsRoot) return false;
        uint256 previous;
        for (uint256 i = 0; i < tops.length; i += 3) {
            uint256 a = uint256(tops[i]);
            if (a >> 160 != 0 || (i != 0 && a <= previous)) return false;
            previous = a;
            if (address(uint160(a)) == asset) found = tops[i + 1] == hash && uint256(tops[i + 2]) == sum;
        }
    }

    /// @notice Whether the node `(leafHash, amount)` sits in `recipient`'s incoming tree in `asset` under
    /// `debitsRoot` (an asset whose credits add up to `assetCredit`), as `p` says.
    function isCredited(
        bytes32 debitsRoot,
        uint256 assetCredit,
        address recipient,
        address asset,
        bytes32 leafHash,
        uint256 amount,
        IClearingHouse.CreditProof calldata p
    ) internal pure returns (bool) {
        if (!isSummary(debitsRoot, assetCredit, recipient, asset, p.summary, p.summaryProof)) return false;
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
