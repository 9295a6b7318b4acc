/**
 * Whether Core can certify dispute answers, checked every round whether or not a dispute is open (audit M-3,
 * docs/clearing.md "Operator key gaps"): the keeper answers a dispute only with a certificate under the
 * Vault's current operator key (./answer-certifier.ts), so a Core whose BLS key is not the Vault's (a key
 * revoked, a rotation executed before Core was restarted with the new secret) or that cannot read the key
 * would wait at the next dispute, silently but for a log line. This task finds it first and publishes the
 * verdict to the store (`operator_state` key {@link OPERATOR_KEY_STATE_KEY}), where every Core process reads
 * it: `GET /core/health` warns (`operator_key`) and `/metrics` counts the checks that found a problem
 * (`surety_operator_key_problems_total`), before a dispute's answer deadline can pass.
 *
 * A problem is logged at error level when it appears (and when its kind changes), and at info level when it
 * clears; not on every round.
 */
import type { Clock } from "../clock";
import type { Logger } from "../logger";
import type { StoreAreas } from "../store";
import { type AnswerCertifier, certifierProblem, type CertifierStatus } from "./answer-certifier";

/** `operator_state` key of the published verdict. */
export const OPERATOR_KEY_STATE_KEY = "keeper.operator_key";

/** The certifier's verdict kinds (`ready`: answers verify). */
export type OperatorKeyState = CertifierStatus["kind"];

/** The published verdict (JSON in `operator_state`). */
export interface OperatorKeySnapshot {
  state: OperatorKeyState;
  /** What to tell the operator (null when `ready`). */
  reason: string | null;
  /** Wall clock (unix seconds) of the last check written (a steady `ready` is not written again). */
  checkedAt: number;
  /** Wall clock of the first check of the problem standing now (null when `ready`). */
  since: number | null;
  /** Checks that found a problem, since the store was created (a counter: never decreases). */
  problems: number;
}

const STATES: ReadonlySet<unknown> = new Set<OperatorKeyState>([
  "ready",
  "vault_key_not_set",
  "other_key",
  "unreadable",
]);

/** A published verdict, or null when absent or unreadable. */
export function parseOperatorKeySnapshot(raw: string | null): OperatorKeySnapshot | null {
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw) as Partial<OperatorKeySnapshot>;
    if (
      typeof v !== "object" ||
      v === null ||
      !STATES.has(v.state) ||
      typeof v.checkedAt !== "number" ||
      typeof v.problems !== "number"
    ) {
      return null;
    }
    return {
      state: v.state as OperatorKeyState,
      reason: typeof v.reason === "string" ? v.reason : null,
      checkedAt: v.checkedAt,
      since: typeof v.since === "number" ? v.since : null,
      problems: v.problems,
    };
  } catch {
    return null;
  }
}

export interface OperatorKeyWatchOptions {
  certifier: AnswerCertifier;
  store: StoreAreas<"operatorState">;
  /** Wall clock: when checked, since when a problem stands. */
  clock: Clock;
  logger: Logger;
}

/** A background task (background.ts): one check of Core's key against the Vault's per round. */
export class OperatorKeyWatch {
  constructor(private readonly options: OperatorKeyWatchOptions) {}

  async tick(): Promise<OperatorKeySnapshot> {
    const { certifier, store, clock, logger } = this.options;
    const before = parseOperatorKeySnapshot(
      await store.operatorState.getOperatorState(OPERATOR_KEY_STATE_KEY),
    );
    const status = await certifier.status();
    const reason = certifierProblem(status);
    const now = clock.nowSeconds();
    const standing = before !== null && before.state !== "ready" ? before : null;
    const snapshot: OperatorKeySnapshot = {
      state: status.kind,
      reason,
      checkedAt: now,
      since: reason === null ? null : standing?.state === status.kind ? (standing.since ?? now) : now,
      problems: (before?.problems ?? 0) + (reason === null ? 0 : 1),
    };
    // One store write per round only while a problem stands (its count grows) or when the state changes.
    if (before?.state !== "ready" || snapshot.state !== "ready") {
      await store.operatorState.setOperatorState(OPERATOR_KEY_STATE_KEY, JSON.stringify(snapshot));
    }
    if (reason !== null && standing?.state !== status.kind) {
      logger.error(
        { event: "operator_key_problem", state: status.kind, reason },
        "dispute answers cannot be certified: operator key",
      );
    } else if (reason === null && standing !== null) {
      logger.info({ event: "operator_key_problem_cleared" }, "operator key: dispute answers certify again");
    }
    return snapshot;
  }
}
