/**
 * The on-chain bond floor, checked by Core before it commits (docs/clearing.md "Bond floor, enforced on
 * chain"). `ClearingHouse.commitCycle` reverts `BondBelowFloor` unless, for every asset of the cycle,
 * `bondOf(asset) >= ceil((bondAtRisk(asset) + totalDebit) × bondFloorBps / 10000)`, where `bondAtRisk` counts
 * every earlier cycle neither finalized nor vetoed. The commit first releases up to 8 settled cycles itself,
 * so the gate, reading `bondAtRisk` as it stands, errs on the safe side until the keeper's
 * `releaseSettledRisk` (sent while the gate is short) is mined. The scheduler asks this gate first, with the
 * plan's totals and the chain's current floor and bonds (latest block, as the commit would see them): when
 * an asset is short it does not estimate nor send the commit (no gas burnt on a revert), the plan's
 * guarantees stay in the pool, and it asks again every tick until the bond is topped up.
 *
 * The gate is what `GET /core/health` (`commit_bond`), `/metrics` (`surety_commit_bond_short`,
 * `surety_commit_bond_required{asset}`) and the logs report: one structured error when commits become
 * held back (`event: "commit_bond_below_floor"`), one info line when they resume; nothing in between,
 * however many ticks it stays short.
 *
 * Issuance reads the same verdict (docs/clearing.md "Bond floor, enforced on chain"): while commits are held
 * back, a new guarantee would sit uncommitted while its payer's withdrawal clock runs, so `POST
 * /core/guarantees` answers 500 `commit_bond_short` until the bond is topped up. Where the scheduler runs in
 * another process (Core's cluster primary, or the leader replica) this process's gate is a mirror of the
 * verdict published in the store ({@link CommitBondGate.mirror}); a publication missing or older than the
 * bound reads `unknown`, which issuance refuses too (`commit_bond_unknown`), never `ok`.
 */
import { getAddress } from "ethers";
import type { Clock } from "../clock";
import type { Logger } from "../logger";

/** `ClearingHouse.BPS`: the floor is in basis points of a cycle's total debit. */
export const BOND_FLOOR_BPS_DENOMINATOR = 10_000n;

/**
 * `off`: no scheduler anywhere reports here (nothing is committed); `ok`: the last check passed; `short`:
 * commits are held back; `unknown`: mirrored from another process whose last publication is missing or
 * stale (issuance is refused as for `short`).
 */
export type CommitBondState = "off" | "ok" | "short" | "unknown";

export interface BondRequirement {
  /** Checksummed asset address (ETH = the zero address). */
  asset: string;
  /** `ClearingHouse.bondOf(asset)` at the check. */
  bond: bigint;
  /** What the cycle needs: `ceil((bondAtRisk + totalDebit) × floorBps / 10000)`. */
  required: bigint;
}

export interface CommitBondStatus {
  state: CommitBondState;
  /** `ClearingHouse.bondFloorBps()` at the last check (null before one). */
  floorBps: number | null;
  /** The cycle the last check was for (null before one). */
  cycleId: number | null;
  /** Every asset of that cycle with a non-zero requirement; the short ones have `bond < required`. */
  assets: BondRequirement[];
  /** Wall-clock unix seconds since the state holds (null while off). */
  since: number | null;
}

/** A verdict as another process publishes it in the store (JSON: amounts as decimal strings). */
export interface CommitBondSnapshot {
  state: Exclude<CommitBondState, "unknown">;
  floorBps: number | null;
  cycleId: number | null;
  assets: { asset: string; bond: string; required: string }[];
  since: number | null;
}

/** What the gate reads of the ClearingHouse (latest block). */
export interface BondFloorReader {
  bondFloorBps(): Promise<bigint>;
  bondOf(asset: string): Promise<bigint>;
  /** The debits of earlier cycles the floor still counts (`ClearingHouse.bondAtRisk`); 0 when absent. */
  bondAtRisk?(asset: string): Promise<bigint>;
}

/**
 * The bond `totalDebit` at risk needs under `floorBps` (a cycle's debit plus `bondAtRisk`), rounded up as the
 * contract rounds it.
 */
export function requiredBond(totalDebit: bigint, floorBps: bigint): bigint {
  if (floorBps === 0n || totalDebit === 0n) return 0n;
  return (totalDebit * floorBps + BOND_FLOOR_BPS_DENOMINATOR - 1n) / BOND_FLOOR_BPS_DENOMINATOR;
}

export interface CommitBondGateOptions {
  logger: Logger;
  /** Wall clock for `since`. */
  clock: Clock;
}

export class CommitBondGate {
  private current: CommitBondStatus = {
    state: "off",
    floorBps: null,
    cycleId: null,
    assets: [],
    since: null,
  };
  /** Set while the verdict comes from another process (mirror); null while this process's scheduler decides. */
  private mirrored: {
    snapshot: CommitBondSnapshot | null;
    publishedAt: number | null;
    maxStaleSeconds: number;
  } | null = null;

  constructor(private readonly options: CommitBondGateOptions) {}

  /** A scheduler commits through this gate (from `off` to `ok` until its first check says otherwise). */
  attach(): void {
    this.mirrored = null;
    if (this.current.state === "off") {
      this.current = { ...this.current, state: "ok", since: this.options.clock.nowSeconds() };
    }
  }

  /** What health, metrics and issuance read (a mirror judges its publication's age now). */
  status(): CommitBondStatus {
    if (this.mirrored === null) return this.current;
    const { snapshot, publishedAt, maxStaleSeconds } = this.mirrored;
    const age = publishedAt === null ? null : this.options.clock.nowSeconds() - publishedAt;
    if (snapshot === null || age === null || age > maxStaleSeconds) {
      return {
        state: "unknown",
        floorBps: snapshot?.floorBps ?? null,
        cycleId: snapshot?.cycleId ?? null,
        assets: snapshot === null ? [] : assetsOf(snapshot),
        since: publishedAt,
      };
    }
    return { ...snapshot, assets: assetsOf(snapshot) };
  }

  /** This process's own verdict in publishable form (what {@link mirror} takes in another process). */
  snapshot(): CommitBondSnapshot {
    const own = this.current;
    return {
      state: own.state === "unknown" ? "off" : own.state,
      floorBps: own.floorBps,
      cycleId: own.cycleId,
      assets: own.assets.map((a) => ({
        asset: a.asset,
        bond: a.bond.toString(),
        required: a.required.toString(),
      })),
      since: own.since,
    };
  }

  /**
   * Takes the verdict of the process that runs the scheduler: `snapshot` as published at `publishedAt`
   * (wall-clock unix seconds; null: nothing published). Judged on this process's wall clock: older than
   * `maxStaleSeconds` (or nothing) reads `unknown`. A later {@link attach} or {@link check} (this process
   * starts committing, e.g. a replica that became leader) ends the mirroring.
   */
  mirror(snapshot: CommitBondSnapshot | null, publishedAt: number | null, maxStaleSeconds: number): void {
    this.mirrored = { snapshot, publishedAt, maxStaleSeconds };
  }

  /**
   * Checks a cycle's totals against the floor and bonds read from `reader`; true when the commit may be
   * sent. Logs only when the verdict changes (short ↔ ok).
   */
  async check(
    cycleId: number,
    totals: readonly { asset: string; totalDebit: bigint }[],
    reader: BondFloorReader,
  ): Promise<boolean> {
    this.mirrored = null;
    const floorBps = await reader.bondFloorBps();
    const assets: BondRequirement[] = [];
    for (const total of totals) {
      if (floorBps === 0n) break;
      const asset = getAddress(total.asset);
      // As the contract checks it: this cycle's debit on top of every earlier cycle still counted.
      const atRisk = reader.bondAtRisk ? await reader.bondAtRisk(asset) : 0n;
      const required = requiredBond(atRisk + total.totalDebit, floorBps);
      if (required === 0n) continue;
      assets.push({ asset, bond: await reader.bondOf(asset), required });
    }
    const short = assets.filter((a) => a.bond < a.required);
    const state: CommitBondState = short.length > 0 ? "short" : "ok";
    const previous = this.current.state;
    const since = state === previous ? this.current.since : this.options.clock.nowSeconds();
    this.current = { state, floorBps: Number(floorBps), cycleId, assets, since };
    if (state === "short" && previous !== "short") {
      this.options.logger.error(
        {
          event: "commit_bond_below_floor",
          cycle_id: cycleId,
          floor_bps: Number(floorBps),
          short: short.map((a) => ({
            asset: a.asset,
            bond: a.bond.toString(),
            required: a.required.toString(),
            missing: (a.required - a.bond).toString(),
          })),
        },
        "operator bond below the ClearingHouse floor: commits held back until ClearingHouse.postBond tops it up",
      );
    } else if (state === "ok" && previous === "short") {
      this.options.logger.info(
        { event: "commit_bond_restored", cycle_id: cycleId, floor_bps: Number(floorBps) },
        "operator bond covers the floor again: commits resume",
      );
    }
    return state === "ok";
  }
}

function assetsOf(snapshot: CommitBondSnapshot): BondRequirement[] {
  return snapshot.assets.map((a) => ({ asset: a.asset, bond: BigInt(a.bond), required: BigInt(a.required) }));
}
