/**
 * Clearing in the database (docs/clearing.md "Netting in the database"): a cycle's plan computed from the
 * guarantees the store holds for it, without loading them. The store sums each (asset, participant)'s
 * flows (PostgreSQL in SQL, SQLite in one pass over its covering pool index) and hands on each
 * guarantee's leaf hash, stored when the guarantee was (a compact buffer of 32 bytes per guarantee,
 * sorted in place, sdk/compact-merkle.ts), so Core's memory grows with participants × assets plus
 * ≈ 76 bytes per guarantee for the guarantees root (leaf hash, sort keys, one tree level). The accounts'
 * sum trees (sdk/debit-tree.ts, over sdk/compact-sum-tree.ts) keep ≈ 80 bytes per guarantee while the cycle
 * is planned (id, leaf hash, amount, the two trees' numbers) and ≈ 24 more while they are built (sort keys
 * and positions), the price of disputes that cost O(log n) on chain.
 *
 * The result is exactly what `netCycle` + `buildCommitPlan` (netting.ts, commit-plan.ts) give for the same
 * guarantees: the same positions, roots and commitCycle arguments (test/operator/db-netting.test.ts checks
 * it on random cycles, on both backends).
 */
import { buildCycleTree } from "../../sdk/merkle";
import { GuaranteeLeafHasher, guaranteesRootOfHashes } from "../../sdk/guarantee-tree";
import { DebitTreesBuilder } from "../../sdk/debit-tree";
import { ZERO_ADDRESS } from "../../sdk/wire";
import type { CycleAggregates, CycleLeafRow, CycleNettingRepository } from "../store";
import { type CommitCycleArgs, type CycleTreeDump, cycleLeaves, placeholderLeaf } from "./commit-plan";
import { fastKeccak256 } from "./native-keccak";
import {
  type AssetNetting,
  type AssetTotal,
  type DebtorObligation,
  MAX_NET_DEBIT,
  NettingInvariantError,
} from "./netting";
import type { NetPositionLeaf, CycleTree } from "../../sdk/merkle";
import { MAX_UINT256 } from "../../sdk/wire";
import type { Keccak256Fn } from "../../sdk/compact-merkle";

/** The netting of a stored cycle: {@link NettingResult} without its per-guarantee id lists. */
export interface StoredCycleNetting {
  cycleId: bigint;
  /** Guarantees of the cycle, self-payments included (what Core moves to NETTED / SETTLED). */
  guaranteeCount: number;
  assets: AssetNetting[];
  totals: AssetTotal[];
  obligations: DebtorObligation[];
  /** Lower case, sorted. */
  nettedV2Ids: string[];
  /** The cycle's V1 ids with a seller's reserve (lower case, sorted; not listed on chain, see netCycle). */
  reservedV1Ids: string[];
}

/** A stored cycle's commit plan: {@link CommitPlan} without the guarantees tree object. */
export interface StoredCyclePlan {
  cycleId: bigint;
  netting: StoredCycleNetting;
  root: string;
  leaves: NetPositionLeaf[];
  placeholder: boolean;
  args: CommitCycleArgs;
  tree: CycleTree;
  treeDump: CycleTreeDump;
}

const lower = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * The ids of `reservedV1Ids` (lower case) that cycle `cycleId` reserved, sorted: one query whatever their
 * number (Core passes every V1 reserve the Vault holds, usually a handful; listing the cycle's ids instead
 * cost ≈ 1.7 s of CPU and ≈ 180 MB of heap at 1M guarantees on SQLite, BENCH_RESERVED_V1=1000).
 */
async function reservedInCycle(
  store: Pick<CycleNettingRepository, "listCycleGuaranteesAmong">,
  cycleId: number,
  reservedV1Ids: ReadonlySet<string>,
): Promise<string[]> {
  // As netCycle: only a lower-case entry can match a (lower-case) stored id.
  const ids = [...reservedV1Ids].filter((id) => id === id.toLowerCase());
  if (ids.length === 0) return [];
  // Lower-case hex of one length: code-unit order is bytewise order.
  return (await store.listCycleGuaranteesAmong(cycleId, ids)).map((id) => id.toLowerCase()).sort();
}

/** Nets the guarantees `cycleId` reserved in the store (aggregated there); null when it has none. */
export async function netStoredCycle(
  store: Pick<CycleNettingRepository, "aggregateCycleGuarantees" | "listCycleNettedV2Ids">,
  cycleId: number,
): Promise<StoredCycleNetting | null> {
  checkCycleId(cycleId);
  const aggregates = await store.aggregateCycleGuarantees(cycleId);
  if (aggregates.guaranteeCount === 0) return null;
  return nettingOfAggregates(cycleId, aggregates, await store.listCycleNettedV2Ids(cycleId));
}

function checkCycleId(cycleId: number): void {
  if (!Number.isSafeInteger(cycleId) || cycleId < 1)
    throw new RangeError("cycleId must be a positive integer");
}

/** The netting rules (netting.ts) applied to a cycle's aggregates. */
function nettingOfAggregates(
  cycleId: number,
  aggregates: CycleAggregates,
  nettedV2Ids: string[],
): StoredCycleNetting {
  const byAsset = new Map<string, { participant: string; net: bigint }[]>();
  for (const flow of aggregates.flows) {
    if (flow.participant.toLowerCase() === ZERO_ADDRESS) {
      throw new NettingInvariantError(`cycle ${cycleId}: the zero address is a participant in ${flow.asset}`);
    }
    const net = flow.received - flow.paid;
    if (net === 0n) continue;
    const key = flow.asset.toLowerCase();
    let list = byAsset.get(key);
    if (list === undefined) byAsset.set(key, (list = []));
    list.push({ participant: flow.participant, net });
  }
  const netting: StoredCycleNetting = {
    cycleId: BigInt(cycleId),
    guaranteeCount: aggregates.guaranteeCount,
    assets: [],
    totals: [],
    obligations: [],
    nettedV2Ids,
    reservedV1Ids: [],
  };
  for (const volume of aggregates.assets) {
    const asset = volume.asset;
    const positions = (byAsset.get(asset.toLowerCase()) ?? []).sort((a, b) =>
      lower(a.participant, b.participant),
    );
    const assetNetting: AssetNetting = {
      asset,
      guaranteeCount: volume.guaranteeCount,
      grossAmount: volume.grossAmount,
      positions: [],
      totalDebit: 0n,
      totalCredit: 0n,
    };
    for (const { participant, net } of positions) {
      const debit = net < 0n ? -net : 0n;
      const credit = net > 0n ? net : 0n;
      if (debit > MAX_NET_DEBIT) {
        throw new NettingInvariantError(`net debit of ${participant} in ${asset} exceeds uint248: ${debit}`);
      }
      assetNetting.positions.push({ participant, net, debit, credit });
      assetNetting.totalDebit += debit;
      assetNetting.totalCredit += credit;
      if (debit > 0n) netting.obligations.push({ asset, debtor: participant, amount: debit });
    }
    if (assetNetting.totalDebit !== assetNetting.totalCredit) {
      throw new NettingInvariantError(
        `asset ${asset}: total debit ${assetNetting.totalDebit} != total credit ${assetNetting.totalCredit}`,
      );
    }
    if (assetNetting.totalDebit > MAX_UINT256) {
      throw new NettingInvariantError(`asset ${asset}: total ${assetNetting.totalDebit} exceeds uint256`);
    }
    netting.assets.push(assetNetting);
    if (assetNetting.totalDebit > 0n) {
      netting.totals.push({
        asset,
        totalDebit: assetNetting.totalDebit,
        totalCredit: assetNetting.totalCredit,
      });
    }
  }
  return netting;
}

/**
 * A `visit` for the store's leaf scans that writes each guarantee's leaf hash (stored at issuance, or
 * hashed here from the fields of a row stored before the `leaf_hash` column) into `hashes`. More rows than
 * `expectedCount` means the cycle's assignment changed meanwhile, and nothing is planned from a moving set.
 */
function leafCollector(cycleId: number, expectedCount: number, keccak: Keccak256Fn) {
  const hashes = Buffer.allocUnsafe(expectedCount * 32);
  const hasher = new GuaranteeLeafHasher(keccak);
  const debits = new DebitTreesBuilder(keccak, expectedCount);
  const collector = {
    hashes,
    debits,
    count: 0,
    visit(row: CycleLeafRow): void {
      if (collector.count >= expectedCount)
        throw new Error(`cycle ${cycleId} gained guarantees while it was planned`);
      if (row.leafHash !== null) {
        // TypedArray#set: V8 copies 32 bytes inline, where Buffer#copy goes through a native call
        // (≈ 0.5 s per 1M rows).
        if (row.leafHash.length !== 32)
          throw new Error(`cycle ${cycleId}: a stored leaf hash is not 32 bytes`);
        hashes.set(row.leafHash, collector.count * 32);
      } else {
        hasher.hashInto(
          {
            guaranteeId: row.guaranteeId,
            payer: row.user,
            recipient: row.recipient,
            asset: row.asset,
            amount: row.amount,
            signature: row.signature,
          },
          hashes,
          collector.count * 32,
          `guarantees[${row.guaranteeId}]`,
        );
      }
      debits.addHashed(
        row.guaranteeId,
        row.user,
        row.recipient,
        row.asset,
        row.amount,
        hashes,
        collector.count * 32,
      );
      collector.count++;
    },
  };
  return collector;
}

function checkScanned(cycleId: number, scanned: number, expectedCount: number): void {
  if (scanned !== expectedCount) {
    throw new Error(
      `cycle ${cycleId} has ${scanned} guarantees, netted ${expectedCount}: changed while planned`,
    );
  }
}

/**
 * The guarantees root of the guarantees `cycleId` reserved, streamed from the store (one leaf hash
 * per row into a compact buffer). `expectedCount` is the netting's count: a different number of rows
 * means the cycle's assignment changed meanwhile, and nothing is planned from a moving set.
 */
export async function storedGuaranteesRoot(
  store: Pick<CycleNettingRepository, "scanCycleLeaves">,
  cycleId: number,
  expectedCount: number,
  keccak: Keccak256Fn = fastKeccak256,
): Promise<string> {
  const leaves = leafCollector(cycleId, expectedCount, keccak);
  const scanned = await store.scanCycleLeaves(cycleId, leaves.visit);
  checkScanned(cycleId, scanned, expectedCount);
  checkScanned(cycleId, leaves.count, expectedCount);
  return guaranteesRootOfHashes(leaves.hashes, expectedCount, keccak, true);
}

/**
 * The commit plan of the guarantees `cycleId` reserved (see the module comment); null when there are
 * none. Same rules as `buildCommitPlan`: a cycle whose positions all net to zero gets the placeholder leaf.
 */
export async function planStoredCycle(
  store: Pick<CycleNettingRepository, "countCycleGuarantees" | "scanCycle" | "listCycleGuaranteesAmong">,
  cycleId: number,
  keccak: Keccak256Fn = fastKeccak256,
  reservedV1Ids: ReadonlySet<string> = new Set(),
): Promise<StoredCyclePlan | null> {
  checkCycleId(cycleId);
  const count = await store.countCycleGuarantees(cycleId);
  if (count === 0) return null;
  // One pass (SQLite) or three streamed reads in one transaction (PostgreSQL): sums, V2 ids, leaf hashes.
  const leafHashes = leafCollector(cycleId, count, keccak);
  const scan = await store.scanCycle(cycleId, leafHashes.visit);
  checkScanned(cycleId, scan.guaranteeCount, count);
  checkScanned(cycleId, leafHashes.count, count);
  const netting = nettingOfAggregates(cycleId, scan, scan.nettedV2Ids);
  if (reservedV1Ids.size > 0) {
    // Reported, not listed (as netCycle does; docs/clearing.md, "Reserved V1 ids"): the scheduler checks
    // them for a collection before the commit; the credit proof releases the reserve.
    netting.reservedV1Ids = await reservedInCycle(store, cycleId, reservedV1Ids);
  }
  const debitsRoot = leafHashes.debits.finish().root;
  const guaranteesRoot = guaranteesRootOfHashes(leafHashes.hashes, count, keccak, true);
  const leaves = cycleLeaves(netting);
  const placeholder = leaves.length === 0;
  const tree = buildCycleTree(placeholder ? [placeholderLeaf(netting.cycleId)] : leaves);
  const args: CommitCycleArgs = {
    cycleId: netting.cycleId,
    root: tree.root,
    guaranteesRoot,
    debitsRoot,
    totals: netting.totals.map((t) => ({ ...t })),
    debtors: netting.obligations.map((o) => ({ ...o })),
    nettedV2Ids: [...netting.nettedV2Ids],
  };
  return {
    cycleId: netting.cycleId,
    netting,
    root: tree.root,
    leaves,
    placeholder,
    args,
    tree,
    treeDump: tree.dump(),
  };
}
