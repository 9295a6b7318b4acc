// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title SumTree
/// @notice A Merkle sum tree: a complete binary tree of `2^depth` leaves in which every node carries a hash
/// and a sum, an inner node's sum is its children's sums added and its hash commits to both children's hashes
/// and sums. A proof of one leaf therefore proves its amount and, along the way, that the root's sum is the sum
/// of every leaf under it: nobody can claim a total the leaves do not add up to. One definition for the
/// ClearingHouse (per-debtor trees of a cycle, docs/clearing.md "Disputes") and the SDK (sdk/sum-tree.ts).
/// @dev Leaf node: `(GuaranteeLeaf.hash(..), amount)`; an empty position is `(0, 0)`. Inner node:
/// `hash = keccak256(abi.encode(left.hash, left.sum, right.hash, right.sum))`, `sum = left.sum + right.sum`.
/// Leaf hashes are keccak256 of 32 bytes and inner hashes keccak256 of 128 bytes, so an inner node can never be
/// passed off as a leaf. An account's trees are summarised in the cycle's `debitsRoot` by its summary
/// (CreditCheck: `summaryLeaf`, and per asset a sum tree of the summaries' net credits, `isSummary`).
library SumTree {
    /// @notice A node: its hash and the sum of the amounts under it.
    struct Node {
        bytes32 hash;
        uint256 sum;
    }

    /// @notice Deepest tree a proof may climb: 2^24 guarantees of one debtor in one cycle and asset, far above
    /// what Core's per-payer bound allows (`max_guarantees_per_payer_cycle` in the public parameters).
    uint256 internal constant MAX_DEPTH = 24;

    /// @notice The proof's path length exceeds {MAX_DEPTH}, or `index` does not fit in it.
    error InvalidSumPath(uint256 index, uint256 depth);

    /// @notice The parent of `left` and `right`.
    function parent(Node memory left, Node memory right) internal pure returns (Node memory) {
        return Node(keccak256(abi.encode(left.hash, left.sum, right.hash, right.sum)), left.sum + right.sum);
    }

    /// @notice The root reached from `leaf` at position `index` with `siblings` (leaf level first). The path's
    /// length is the tree's depth.
    function rootOf(
        Node calldata leaf,
        uint256 index,
        Node[] calldata siblings
    ) internal pure returns (Node memory node) {
        uint256 depth = siblings.length;
        if (depth > MAX_DEPTH || index >> depth != 0) revert InvalidSumPath(index, depth);
        node = leaf;
        for (uint256 level = 0; level < depth; ++level) {
            Node memory sibling = siblings[level];
            node = (index >> level) & 1 == 0 ? parent(node, sibling) : parent(sibling, node);
        }
    }
}
