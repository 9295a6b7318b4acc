/**
 * The operator bond (docs/clearing.md "Challenges, veto and bond"): what the ClearingHouse charges for
 * debits voided by unanswered challenges and refunds double listings from. Read from the chain every
 * background round, per asset (every asset with a configured floor, ETH, and every asset Core holds
 * collateral locked in), exported as the `surety_operator_bond{asset}` gauge, and logged as a warning
 * when it falls below its floor (`SURETY_BOND_FLOORS`): a bond below the largest total debit of a cycle
 * no longer keeps every creditor whole if the operator fails to answer. Also read: what the bond owes in
 * refunds it could not pay yet (`ClearingHouse.totalRefundOwed`: excess refunds above a debit, double
 * listings, unanswered credit disputes beyond the bond's spare part; audit A2-H1), exported as
 * `surety_bond_refunds_owed{asset}` and logged as a warning once while it is above zero: those debtors and
 * recipients wait for a top-up (`postBond`), and the bond cannot be withdrawn meanwhile.
 */
import { getAddress, ZeroAddress } from "ethers";
import type { Logger } from "../logger";
import { clearingHouseAt } from "../chain/abi";
import type { ChainProvider } from "../chain/provider";

export interface BondMonitorOptions {
  provider: ChainProvider;
  clearingHouse: string;
  /** Floor per checksummed asset address (base units); assets without one are only exported. */
  floors: Readonly<Record<string, bigint>>;
  /** Further assets to read (e.g. those with collateral locked), any letter case. */
  assets: () => Promise<Iterable<string>>;
  logger: Logger;
}

export class BondMonitor {
  private readonly latest = new Map<string, bigint>();
  private readonly owed = new Map<string, bigint>();
  private readonly below = new Set<string>();
  private readonly owing = new Set<string>();

  constructor(private readonly options: BondMonitorOptions) {}

  /** The last bond read per asset (checksummed), empty before the first tick. */
  values(): ReadonlyMap<string, bigint> {
    return this.latest;
  }

  /** What the bond owed in refunds per asset (checksummed) at the last tick, empty before the first. */
  refundsOwed(): ReadonlyMap<string, bigint> {
    return this.owed;
  }

  /** Reads every asset's bond; warns when one enters its floor's deficit, notes when it recovers. */
  async tick(): Promise<ReadonlyMap<string, bigint>> {
    const { provider, clearingHouse, floors, logger } = this.options;
    const assets = new Set<string>([ZeroAddress, ...Object.keys(floors)]);
    for (const asset of await this.options.assets()) assets.add(getAddress(asset));
    for (const asset of [...assets].sort()) {
      const house = clearingHouseAt(clearingHouse, provider);
      const bond = await house.bondOf(asset);
      this.latest.set(asset, bond);
      this.noteRefundsOwed(asset, await house.totalRefundOwed(asset));
      const floor = floors[asset];
      if (floor === undefined) continue;
      if (bond < floor) {
        if (!this.below.has(asset)) {
          this.below.add(asset);
          logger.warn(
            { asset, bond: bond.toString(), floor: floor.toString() },
            "operator bond below its floor: post more with ClearingHouse.postBond",
          );
        }
      } else if (this.below.delete(asset)) {
        logger.info(
          { asset, bond: bond.toString(), floor: floor.toString() },
          "operator bond back above its floor",
        );
      }
    }
    return this.latest;
  }

  private noteRefundsOwed(asset: string, owed: bigint): void {
    const { logger } = this.options;
    this.owed.set(asset, owed);
    if (owed > 0n && !this.owing.has(asset)) {
      this.owing.add(asset);
      logger.warn(
        { asset, owed: owed.toString() },
        "operator bond owes refunds it could not pay yet: post more with ClearingHouse.postBond",
      );
    } else if (owed === 0n && this.owing.delete(asset)) {
      logger.info({ asset }, "operator bond owes no refunds any more");
    }
  }
}
