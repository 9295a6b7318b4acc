/**
 * The Vault's protocol timings as Core knows them: read once at startup, then kept current by the
 * indexer (`TimingsUpdated`). Issuance uses them to bound V2 validation deadlines (contracts security
 * review, finding 1; derivation in docs/operator-async.md).
 *
 * Besides the timings in force it keeps every change scheduled and not yet executed or cancelled
 * (`TimingsScheduled`, `OperationCancelled`; `setTimings` is timelocked, docs/contracts.md): a V2
 * guarantee issued while a shorter change waits out its delay must stay covered once the change executes,
 * so the deadline cap is the strictest under the timings in force and every scheduled set
 * ({@link ProtocolTimings.bounding}, docs/operator-async.md "V2 deadline cap").
 */
import { vaultAt } from "./abi";
import type { ScheduledTimings, VaultTimings } from "./handlers";
import type { ChainProvider } from "./provider";

export type { ScheduledTimings };

const TIMING_FIELDS: readonly (keyof VaultTimings)[] = [
  "cycleLength",
  "commitDelay",
  "challengeWindow",
  "paymentWindow",
  "defaultWindow",
  "withdrawalGracePeriod",
  "confirmationLag",
];

function sameTimings(a: VaultTimings, b: VaultTimings): boolean {
  return TIMING_FIELDS.every((field) => a[field] === b[field]);
}

/** A published list of scheduled changes, or an empty list when absent or malformed. */
export function parseScheduledTimings(value: unknown): ScheduledTimings[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (item): item is ScheduledTimings =>
      typeof item === "object" &&
      item !== null &&
      typeof (item as ScheduledTimings).operation === "string" &&
      typeof (item as ScheduledTimings).readyAt === "number" &&
      typeof (item as ScheduledTimings).timings === "object" &&
      (item as ScheduledTimings).timings !== null &&
      TIMING_FIELDS.every((field) => typeof (item as ScheduledTimings).timings[field] === "number"),
  );
}

export class ProtocolTimings {
  private readonly pending = new Map<string, ScheduledTimings>();

  constructor(private value: VaultTimings | null = null) {}

  /** Null until loaded (then V2 deadlines are not capped: only tests without a Vault run so). */
  get(): VaultTimings | null {
    return this.value;
  }

  /** The timings in force (`TimingsUpdated`): a scheduled change equal to them has just executed. */
  set(timings: VaultTimings): void {
    this.value = Object.freeze({ ...timings });
    for (const [operation, scheduled] of this.pending) {
      if (sameTimings(scheduled.timings, timings)) this.pending.delete(operation);
    }
  }

  /** Changes scheduled and neither executed nor cancelled, oldest first. */
  scheduled(): ScheduledTimings[] {
    return [...this.pending.values()];
  }

  /** A `TimingsScheduled` event. */
  schedule(change: ScheduledTimings): void {
    const operation = change.operation.toLowerCase();
    this.pending.set(
      operation,
      Object.freeze({ ...change, operation, timings: Object.freeze({ ...change.timings }) }),
    );
  }

  /** An `OperationCancelled` event (of any timelocked operation: only a scheduled timings change matters here). */
  cancel(operation: string): void {
    this.pending.delete(operation.toLowerCase());
  }

  /** Replaces the scheduled changes (what another process published: cluster workers, follower replicas). */
  setScheduled(changes: readonly ScheduledTimings[]): void {
    this.pending.clear();
    for (const change of changes) this.schedule(change);
  }

  /** Every set of timings that is or may come into force: the one in force, then each scheduled one. */
  bounding(): VaultTimings[] {
    return [...(this.value ? [this.value] : []), ...[...this.pending.values()].map((s) => s.timings)];
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

  /**
   * Takes over `changes` (published before this process started: a restart, a new leader) that the Vault
   * still has scheduled (`operationReadyAt(operation) != 0`); an executed or cancelled one is dropped.
   */
  async restoreScheduled(
    provider: Pick<ChainProvider, "call">,
    vault: string,
    changes: readonly ScheduledTimings[],
  ): Promise<void> {
    const contract = vaultAt(vault, provider);
    for (const change of changes) {
      if ((await contract.operationReadyAt(change.operation)) !== 0n) this.schedule(change);
    }
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

/**
 * {@link maxV2ValidationDeadline} under every set of timings in `bounding` (the one in force and each
 * scheduled change: {@link ProtocolTimings.bounding}): the earliest of them; null when none is known.
 */
export function strictestV2ValidationDeadline(
  bounding: readonly VaultTimings[],
  now: number,
  marginSeconds: number,
): number | null {
  if (bounding.length === 0) return null;
  return Math.min(...bounding.map((timings) => maxV2ValidationDeadline(timings, now, marginSeconds)));
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
