/**
 * Multilateral netting of one clearing cycle (docs/protocol.md, "Clearing cycles"). Pure: no store, no chain, no clock.
 * At cutoff Core passes every FINALIZED_PAYABLE guarantee of the window; per asset each participant's
 * net position is `received − paid`, a negative net is a debit (the participant pays the ClearingHouse),
 * a positive one a credit (it claims from the ClearingHouse with a Merkle proof).
 *
 * Rules (docs/clearing.md):
 * - Participants whose net is zero get no leaf and no obligation.
 * - An asset whose positions all net to zero gets no `totals` entry (nothing to pay or claim); its
 *   guarantees are still netted (included, V2 ids consumed).
 * - A guarantee whose payer is its recipient is netted like any other (it contributes nothing) and is
 *   also listed in `selfPaymentIds`, so Core can settle it and release its lock; its V2 id is not in
 *   `nettedV2Ids` (it would only cost commit gas: remunerating a self-payment pays the payer).
 * - A V1 guarantee whose id is in `reservedV1Ids` (the seller registered a V1 reserve for it,
 *   `Vault.V1ReserveRegistered`) is reported in `reservedV1Ids` (Core checks before the commit that the
 *   seller has not collected it) but **not** listed in `nettedV2Ids`: the reserve is released by
 *   `Vault.releaseListedReserve` with the proof that the cycle credits it to its recipient, which also marks
 *   it netted; a mark by the commit protected nothing more and cost ≈ 24k gas each (docs/clearing.md,
 *   "Reserved V1 ids").
 * - Addresses are compared case-insensitively (keys are lower case) and returned EIP-55 checksummed.
 * - Output order is deterministic: assets, participants and V2 ids sorted by their lower-case hex.
 *
 * Cost: O(n) over the guarantees with one BigInt addition per side, keyed by (asset, participant);
 * each distinct address string is validated and lower-cased once (a per-call cache).
 */
import { getAddress } from "ethers";
import { WireError } from "../../sdk/errors";
import { MAX_UINT256, ZERO_ADDRESS, type GuaranteeVersion } from "../../sdk/wire";

/** ClearingHouse stores a debt as `uint248` (`SafeCast.toUint248`); a larger debit would revert the commit. */
export const MAX_NET_DEBIT = (1n << 248n) - 1n;

const ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;
const BYTES32 = /^0[xX][0-9a-fA-F]{64}$/;

/** A guarantee that may enter a cycle (state FINALIZED_PAYABLE); the store's record fits this shape. */
export interface PayableGuarantee {
  /** 0x-prefixed 32-byte id (any letter case). */
  guaranteeId: string;
  version: GuaranteeVersion;
  /** The payer. */
  user: string;
  recipient: string;
  /** ERC-20 address, or the zero address for ETH. */
  asset: string;
  amount: bigint;
  /**
   * The payer's signature (0x hex; the store's record has it): its keccak256 goes into the cycle's
   * guarantees root (commit-plan.ts). Absent, the leaf's signature hash is zero and the guarantee can
   * never answer a challenge.
   */
  signature?: string;
}

/** One participant's non-zero net position in one asset; exactly one of debit/credit is non-zero. */
export interface NetPosition {
  /** EIP-55. */
  participant: string;
  /** received − paid. */
  net: bigint;
  /** max(−net, 0). */
  debit: bigint;
  /** max(net, 0). */
  credit: bigint;
}

/** Everything netted in one asset. */
export interface AssetNetting {
  /** EIP-55 (the zero address for ETH). */
  asset: string;
  /** Guarantees of this asset in the cycle, self-payments included. */
  guaranteeCount: number;
  /** Sum of their amounts (gross volume before netting). */
  grossAmount: bigint;
  /** Non-zero positions, sorted by participant. */
  positions: NetPosition[];
  totalDebit: bigint;
  totalCredit: bigint;
}

/** ClearingHouse.AssetTotal. */
export interface AssetTotal {
  asset: string;
  totalDebit: bigint;
  totalCredit: bigint;
}

/** IClearingVault.Obligation: a net debtor and what it owes. */
export interface DebtorObligation {
  asset: string;
  debtor: string;
  amount: bigint;
}

export interface NettingResult {
  cycleId: bigint;
  /** Every asset that had a guarantee, sorted; positions may be empty when everything netted to zero. */
  assets: AssetNetting[];
  /** Assets with non-zero totals, sorted: commitCycle's `totals`. */
  totals: AssetTotal[];
  /** Net debtors sorted by (asset, debtor): commitCycle's `debtors`. */
  obligations: DebtorObligation[];
  /** V2 guarantee ids netted, self-payments left out (lower case, sorted): commitCycle's `nettedV2Ids`. */
  nettedV2Ids: string[];
  /**
   * The cycle's V1 ids with a seller's reserve (lower case, sorted): not listed on chain, checked for a
   * collection (`Remunerated`) before the commit.
   */
  reservedV1Ids: string[];
  /** Every guarantee id netted (lower case, input order): Core moves them to NETTED. */
  includedIds: string[];
  /** Ids of guarantees whose payer is the recipient (lower case, input order); also in includedIds. */
  selfPaymentIds: string[];
}

/** The netting broke an invariant (debits ≠ credits, a value out of range); nothing may be committed. */
export class NettingInvariantError extends Error {
  override readonly name = "NettingInvariantError";
}

interface AssetAccumulator {
  key: string;
  nets: Map<string, bigint>;
  guaranteeCount: number;
  grossAmount: bigint;
}

/** Validates each distinct address string once; returns its lower-case key. */
class AddressKeys {
  private readonly keys = new Map<unknown, string>();

  key(raw: unknown, field: string): string {
    const cached = this.keys.get(raw);
    if (cached !== undefined) return cached;
    if (typeof raw !== "string" || !ADDRESS.test(raw)) {
      throw new WireError(field, "must be a 0x-prefixed 20-byte hex address");
    }
    const key = raw.toLowerCase();
    this.keys.set(raw, key);
    return key;
  }
}

function checkCycleId(cycleId: unknown): bigint {
  // ClearingHouse ids start at 1 (lastCycleId + 1).
  if (typeof cycleId !== "bigint" || cycleId < 1n || cycleId > MAX_UINT256) {
    throw new WireError("cycleId", "must be a bigint between 1 and 2^256 − 1");
  }
  return cycleId;
}

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Nets one cycle. Throws WireError naming `guarantees[i].<field>` on a malformed guarantee or a
 * duplicate id (a guarantee netted twice would be paid twice), and NettingInvariantError if the result
 * could not be committed; never returns a partial result.
 */
export function netCycle(
  cycleId: bigint,
  guarantees: Iterable<PayableGuarantee>,
  reservedV1Ids: ReadonlySet<string> = new Set(),
): NettingResult {
  const id = checkCycleId(cycleId);
  const addresses = new AddressKeys();
  const assets = new Map<string, AssetAccumulator>();
  const seenIds = new Set<string>();
  const includedIds: string[] = [];
  const nettedV2Ids: string[] = [];
  const reservedInCycle: string[] = [];
  const selfPaymentIds: string[] = [];

  let index = 0;
  for (const g of guarantees) {
    const field = `guarantees[${index}]`;
    const rawId: unknown = g.guaranteeId;
    if (typeof rawId !== "string" || !BYTES32.test(rawId)) {
      throw new WireError(`${field}.guaranteeId`, "must be a 0x-prefixed 32-byte hex string");
    }
    const guaranteeId = rawId.toLowerCase();
    if (seenIds.has(guaranteeId)) throw new WireError(`${field}.guaranteeId`, "appears twice in the cycle");
    if (g.version !== 1 && g.version !== 2) throw new WireError(`${field}.version`, "must be 1 or 2");
    const amount: unknown = g.amount;
    if (typeof amount !== "bigint" || amount <= 0n || amount > MAX_UINT256) {
      throw new WireError(`${field}.amount`, "must be a bigint between 1 and 2^256 − 1");
    }
    const payer = addresses.key(g.user, `${field}.user`);
    const recipient = addresses.key(g.recipient, `${field}.recipient`);
    const assetKey = addresses.key(g.asset, `${field}.asset`);
    // Only the asset may be the zero address (ETH); a zero participant could neither pay nor claim.
    if (payer === ZERO_ADDRESS) throw new WireError(`${field}.user`, "must not be the zero address");
    if (recipient === ZERO_ADDRESS) throw new WireError(`${field}.recipient`, "must not be the zero address");

    let acc = assets.get(assetKey);
    if (acc === undefined) {
      acc = { key: assetKey, nets: new Map(), guaranteeCount: 0, grossAmount: 0n };
      assets.set(assetKey, acc);
    }
    acc.guaranteeCount += 1;
    acc.grossAmount += amount;
    if (payer === recipient) {
      selfPaymentIds.push(guaranteeId);
    } else {
      const nets = acc.nets;
      nets.set(payer, (nets.get(payer) ?? 0n) - amount);
      nets.set(recipient, (nets.get(recipient) ?? 0n) + amount);
    }
    seenIds.add(guaranteeId);
    includedIds.push(guaranteeId);
    // A self-payment's V2 id is not listed (contracts finding 6): marking it costs ~24k gas of commit and
    // protects nothing, since remunerating it later moves the payer's collateral to the payer.
    if (g.version === 2 && payer !== recipient) nettedV2Ids.push(guaranteeId);
    if (g.version === 1 && reservedV1Ids.has(guaranteeId)) reservedInCycle.push(guaranteeId);
    index += 1;
  }

  const checksummed = new Map<string, string>();
  const eip55 = (key: string): string => {
    let address = checksummed.get(key);
    if (address === undefined) {
      address = getAddress(key);
      checksummed.set(key, address);
    }
    return address;
  };

  const result: NettingResult = {
    cycleId: id,
    assets: [],
    totals: [],
    obligations: [],
    // Default sort (UTF-16 code units) orders lower-case hex like byKey, and is faster on 10^6 ids.
    nettedV2Ids: nettedV2Ids.sort(),
    reservedV1Ids: reservedInCycle.sort(),
    includedIds,
    selfPaymentIds,
  };
  for (const assetKey of [...assets.keys()].sort(byKey)) {
    const acc = assets.get(assetKey) as AssetAccumulator;
    const asset = eip55(assetKey);
    const netting: AssetNetting = {
      asset,
      guaranteeCount: acc.guaranteeCount,
      grossAmount: acc.grossAmount,
      positions: [],
      totalDebit: 0n,
      totalCredit: 0n,
    };
    for (const participantKey of [...acc.nets.keys()].sort(byKey)) {
      const net = acc.nets.get(participantKey) as bigint;
      if (net === 0n) continue;
      const participant = eip55(participantKey);
      const debit = net < 0n ? -net : 0n;
      const credit = net > 0n ? net : 0n;
      if (debit > MAX_NET_DEBIT) {
        throw new NettingInvariantError(`net debit of ${participant} in ${asset} exceeds uint248: ${debit}`);
      }
      netting.positions.push({ participant, net, debit, credit });
      netting.totalDebit += debit;
      netting.totalCredit += credit;
      if (debit > 0n) result.obligations.push({ asset, debtor: participant, amount: debit });
    }
    // Every guarantee adds its amount to one side and subtracts it from the other, so this cannot fail
    // unless the code above is wrong: refuse to produce a cycle the ClearingHouse would reject.
    if (netting.totalDebit !== netting.totalCredit) {
      throw new NettingInvariantError(
        `asset ${asset}: total debit ${netting.totalDebit} != total credit ${netting.totalCredit}`,
      );
    }
    if (netting.totalDebit > MAX_UINT256) {
      throw new NettingInvariantError(`asset ${asset}: total ${netting.totalDebit} exceeds uint256`);
    }
    result.assets.push(netting);
    if (netting.totalDebit > 0n) {
      result.totals.push({ asset, totalDebit: netting.totalDebit, totalCredit: netting.totalCredit });
    }
  }
  return result;
}

/** Whether the cycle has anything to commit on chain (see commit-plan.ts: an empty window is skipped). */
export function isEmptyCycle(result: NettingResult): boolean {
  return result.includedIds.length === 0;
}
