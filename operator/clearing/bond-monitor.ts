/**
 * The operator bond (docs/clearing.md "Challenges, veto and bond"): what the ClearingHouse charges for
 * debits voided by unanswered challenges and refunds double listings from. Read from the chain every
 * background round, per asset (every asset with a configured floor, ETH, and every asset Core holds
 * collateral locked in), exported as the `surety_operator_bond{asset}` gauge, and logged as a warning
 * when it falls below its floor (`SURETY_BOND_FLOORS`): a bond below the largest total debit of a cycle
 * no longer keeps every creditor whole if the operator fails to answer.
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
  private readonly below = new Set<string>();

  constructor(private readonly options: BondMonitorOptions) {}

  /** The last bond read per asset (checksummed), empty before the first tick. */
  values(): ReadonlyMap<string, bigint> {
    return this.latest;
  }

  /** Reads every asset's bond; warns when one enters its floor's deficit, notes when it recovers. */
  async tick(): Promise<ReadonlyMap<string, bigint>> {
    const { provider, clearingHouse, floors, logger } = this.options;
    const assets = new Set<string>([ZeroAddress, ...Object.keys(floors)]);
    for (const asset of await this.options.assets()) assets.add(getAddress(asset));
    for (const asset of [...assets].sort()) {
      const bond = await clearingHouseAt(clearingHouse, provider).bondOf(asset);
      this.latest.set(asset, bond);
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
}
