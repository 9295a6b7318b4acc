/**
 * Clearing keeper (docs/operator-async.md): once a cycle's payment deadline has passed, covers every
 * debt still open with `ClearingHouse.coverDefault`, so creditors are funded even if nobody else acts
 * (the grace-period invariant budgets `defaultWindow` for this). "Passed" is by chain time (the indexed
 * head's timestamp), as the ClearingHouse judges it, never by Core's wall clock. Optionally (`claimCredits`) it also
 * claims funded credits on the creditors' behalf: `claimNetCredit` always pays the participant, never
 * the caller, so this only spends the operator's gas.
 *
 * Idempotent by construction: every call is estimated first, and a debt already resolved (or a credit
 * claimed or not yet funded) reverts the estimate, so nothing is sent. Open debts are read from Core's
 * books (the indexer) and re-checked on chain by that estimate. A call sent on an earlier tick and not
 * mined yet is not sent again: the operator sender answers it as already in flight and follows it.
 */
import type { Clock } from "../clock";
import type { DeploymentInfo } from "../deployment";
import type { Logger } from "../logger";
import { clearingHouseInterface, commitErrorsInterface } from "../chain/abi";
import { CallRevertedError, type OperatorSender } from "../chain/sender";
import type { Store } from "../store";
import { loadCycleTree, participantPositions } from "./commit-plan";

export interface ClearingKeeperOptions {
  store: Store;
  sender: OperatorSender;
  deployment: Pick<DeploymentInfo, "clearingHouse">;
  /**
   * Chain time (the indexed head, operator/clock.ts ChainClock): `coverDefault` reverts until
   * `block.timestamp` passes the payment deadline, so the keeper judges that deadline by the chain.
   */
  chainClock: Clock;
  logger: Logger;
  /** Also claim funded credits for creditors (costs the operator gas). */
  claimCredits: boolean;
}

export interface KeeperTickResult {
  covered: { cycleId: number; asset: string; debtor: string; txHash: string }[];
  claimed: { cycleId: number; asset: string; participant: string; txHash: string }[];
}

export class ClearingKeeper {
  private running: Promise<KeeperTickResult> | null = null;

  constructor(private readonly options: ClearingKeeperOptions) {}

  tick(): Promise<KeeperTickResult> {
    this.running ??= this.step().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async step(): Promise<KeeperTickResult> {
    const result: KeeperTickResult = { covered: [], claimed: [] };
    await this.coverDefaults(result);
    if (this.options.claimCredits) await this.claimCredits(result);
    return result;
  }

  private async coverDefaults(result: KeeperTickResult): Promise<void> {
    const { store, chainClock } = this.options;
    const now = chainClock.nowSeconds();
    const open = await store.listCycleDebts({ status: "OPEN" });
    const deadlines = new Map<number, number | null>();
    for (const debt of open) {
      if (!deadlines.has(debt.cycleId)) {
        deadlines.set(debt.cycleId, (await store.getCycle(debt.cycleId))?.paymentDeadline ?? null);
      }
      const deadline = deadlines.get(debt.cycleId);
      if (deadline === null || deadline === undefined || now <= deadline) continue;
      const data = clearingHouseInterface.encodeFunctionData("coverDefault", [
        debt.cycleId,
        debt.asset,
        debt.debtor,
      ]);
      const txHash = await this.trySend(data, {
        cycle_id: debt.cycleId,
        asset: debt.asset,
        debtor: debt.debtor,
      });
      if (txHash)
        result.covered.push({ cycleId: debt.cycleId, asset: debt.asset, debtor: debt.debtor, txHash });
    }
  }

  private async claimCredits(result: KeeperTickResult): Promise<void> {
    const { store } = this.options;
    for (const cycle of await store.listCycles(["COMMITTED", "FINALIZED"])) {
      const claimed = new Set(
        (await store.listCycleClaims(cycle.cycleId)).map((c) => `${c.asset}:${c.participant}`.toLowerCase()),
      );
      const tree = loadCycleTree(JSON.parse(cycle.treeDump), cycle.root);
      const participants = new Set<string>();
      for (const [, value] of tree.entries()) participants.add(value[2]);
      for (const participant of participants) {
        for (const position of participantPositions(tree, participant)) {
          if (position.credit === 0n) continue;
          if (claimed.has(`${position.asset}:${position.participant}`.toLowerCase())) continue;
          const data = clearingHouseInterface.encodeFunctionData("claimNetCredit", [
            position.cycleId,
            position.asset,
            position.participant,
            position.credit,
            position.proof,
          ]);
          const txHash = await this.trySend(data, {
            cycle_id: cycle.cycleId,
            asset: position.asset,
            participant: position.participant,
          });
          if (txHash) {
            result.claimed.push({
              cycleId: cycle.cycleId,
              asset: position.asset,
              participant: position.participant,
              txHash,
            });
          }
        }
      }
    }
  }

  /** Sends the call unless its estimate reverts (already done, not yet possible): then null. */
  private async trySend(data: string, context: Record<string, unknown>): Promise<string | null> {
    const { sender, deployment, logger } = this.options;
    try {
      const signed = await sender.send({
        to: deployment.clearingHouse,
        data,
        errors: commitErrorsInterface,
        label: `keeper ${clearingHouseInterface.parseTransaction({ data })?.name ?? "call"}`,
      });
      if (signed.alreadyInFlight) {
        // Sent on an earlier tick and not mined yet: the sender follows it (re-send, fee replacement).
        logger.debug({ ...context, tx: signed.hash }, "keeper call already in flight");
        return null;
      }
      logger.info({ ...context, tx: signed.hash, nonce: signed.nonce }, "keeper transaction sent");
      return signed.hash;
    } catch (error) {
      if (error instanceof CallRevertedError) {
        logger.debug({ ...context, reason: error.message }, "keeper call skipped");
        return null;
      }
      throw error;
    }
  }
}
