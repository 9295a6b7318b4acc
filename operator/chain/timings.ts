/**
 * The Vault's protocol timings as Core knows them: read once at startup, then kept current by the
 * indexer (`TimingsUpdated`). Issuance uses them to bound V2 validation deadlines (contracts security
 * review, finding 1; derivation in docs/operator-async.md).
 */
import { vaultAt } from "./abi";
import type { VaultTimings } from "./events";
import type { ChainProvider } from "./provider";

export class ProtocolTimings {
  constructor(private value: VaultTimings | null = null) {}

  /** Null until loaded (then V2 deadlines are not capped: only tests without a Vault run so). */
  get(): VaultTimings | null {
    return this.value;
  }

  set(timings: VaultTimings): void {
    this.value = Object.freeze({ ...timings });
  }

  /** Reads `Vault.timings()`. */
  async load(provider: Pick<ChainProvider, "call">, vault: string): Promise<VaultTimings> {
    const t = await vaultAt(vault, provider).timings();
    const timings: VaultTimings = {
      cycleLength: Number(t.cycleLength),
      commitDelay: Number(t.commitDelay),
      challengeWindow: Number(t.challengeWindow),
      paymentWindow: Number(t.paymentWindow),
      defaultWindow: Number(t.defaultWindow),
      withdrawalGracePeriod: Number(t.withdrawalGracePeriod),
      confirmationLag: Number(t.confirmationLag),
    };
    this.set(timings);
    return timings;
  }
}

/**
 * The latest `validation_deadline` Core accepts for a V2 guarantee issued at `now`.
 *
 * A pending V2 guarantee has no on-chain reservation. A withdrawal requested at r ≥ now finalizes no
 * earlier than r + grace ≥ now + grace. Core nets a validated-but-unremunerated V2 guarantee once its
 * deadline has passed and been indexed (≤ deadline + margin), in the cycle closing within
 * cycleLength, committed within commitDelay and mined within the confirmation lag (Core acts on blocks
 * `confirmations` deep): its obligation is on chain by
 * deadline + margin + cycleLength + commitDelay + confirmationLag, which must come strictly before now + grace.
 */
export function maxV2ValidationDeadline(timings: VaultTimings, now: number, marginSeconds: number): number {
  return (
    now +
    timings.withdrawalGracePeriod -
    timings.cycleLength -
    timings.commitDelay -
    timings.confirmationLag -
    marginSeconds -
    1
  );
}

/** When an open withdrawal can finalize: as `Vault.withdrawalFinalizableAt` computes it. */
export function withdrawalReadyAt(
  withdrawal: { finalizableAt: number; requestedAt: number },
  timings: VaultTimings | null,
): number {
  const underCurrent = timings ? withdrawal.requestedAt + timings.withdrawalGracePeriod : 0;
  return Math.max(withdrawal.finalizableAt, underCurrent);
}

/**
 * Why the Vault's `confirmationLag` looks too short for Core's `confirmations` (null: it does not). Core acts
 * on blocks `confirmations` deep, so its commits trail the chain by about confirmations × block time plus a
 * block; the grace-period invariant only protects sellers if the on-chain lag covers that. Core does not know
 * the block time, so it flags only a lag below one second per confirmation (every chain Core targets has
 * blocks of at least a second): set `Timings.confirmationLag` to confirmations × block time + one block.
 */
export function confirmationLagProblem(timings: VaultTimings, confirmations: number): string | null {
  if (timings.confirmationLag >= confirmations) return null;
  return (
    `the Vault's confirmationLag (${timings.confirmationLag} s) is shorter than Core's ${confirmations} ` +
    "confirmations take: commits may land after the grace-period invariant assumes; raise it with setTimings"
  );
}
