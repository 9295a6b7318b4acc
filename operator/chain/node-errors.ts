/**
 * What an Ethereum node's errors mean to the operator sender: a call that would revert (with its
 * decoded custom error), and how a node answered `eth_sendRawTransaction`. Nodes word these errors
 * differently (geth, Hardhat, hosted RPCs) and ethers wraps them, so the innermost message is read.
 */
import type { ErrorDescription } from "ethers";

/** A call would revert; `error` is the decoded custom error when the ABI knows it. */
export class CallRevertedError extends Error {
  override readonly name = "CallRevertedError";
  constructor(
    readonly error: ErrorDescription | null,
    readonly data: string | null,
    cause: unknown,
  ) {
    super(
      error
        ? `reverted with ${error.name}(${error.args.map(String).join(", ")})`
        : `reverted: ${String(cause)}`,
    );
  }
}

/** How a node answered `eth_sendRawTransaction`. */
export type BroadcastOutcome =
  | { kind: "accepted" }
  /** These exact bytes are already in the node's pool. */
  | { kind: "known" }
  /** The account's mined nonce is above this one. */
  | { kind: "nonce_too_low"; error: unknown }
  /** The node will not hold a transaction above the account's next nonce (Hardhat automine, some RPCs). */
  | { kind: "nonce_too_high"; error: unknown }
  /** Another transaction holds this nonce in the pool with fees this one does not beat enough. */
  | { kind: "underpriced"; error: unknown }
  /** Its fees are below what the node admits (its minimum tip, or the next block's base fee). */
  | { kind: "fee_too_low"; error: unknown }
  /** Anything else: the node is unreachable, or refuses these bytes for good (gas, size, fee cap, funds). */
  | { kind: "failed"; error: unknown };

/**
 * The node's own words: ethers wraps them (and gives "transaction underpriced" and "replacement
 * transaction underpriced" the same code), so the innermost message is read.
 */
function nodeMessage(error: unknown): string {
  const e = error as {
    info?: { error?: { message?: unknown } };
    error?: { message?: unknown };
    message?: unknown;
  };
  return String(e.info?.error?.message ?? e.error?.message ?? e.message ?? error).toLowerCase();
}

export function classify(error: unknown): BroadcastOutcome {
  const message = nodeMessage(error);
  if (/already known|known transaction|already imported|already exists/.test(message))
    return { kind: "known" };
  if (/nonce too low|nonce has already been used/.test(message)) return { kind: "nonce_too_low", error };
  if (/nonce too high|nonce gap/.test(message)) return { kind: "nonce_too_high", error };
  if (/replacement transaction underpriced|replacement fee too low|replacement underpriced/.test(message)) {
    return { kind: "underpriced", error };
  }
  if (
    /underpriced|fee too low|too low for the next block|less than (the )?block base fee|gas price too low/.test(
      message,
    )
  ) {
    return { kind: "fee_too_low", error };
  }
  return { kind: "failed", error };
}

export function revertData(error: unknown): string | null {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const data = (current as { data?: unknown }).data;
    if (typeof data === "string" && /^0x[0-9a-fA-F]*$/.test(data) && data.length >= 10) return data;
    if (data && typeof data === "object" && typeof (data as { data?: unknown }).data === "string") {
      return (data as { data: string }).data;
    }
    current =
      (current as { error?: unknown; info?: unknown; cause?: unknown }).error ??
      (current as { info?: { error?: unknown } }).info?.error ??
      (current as { cause?: unknown }).cause;
  }
  return null;
}

export function isRevert(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  const message = String((error as Error).message ?? error);
  return code === "CALL_EXCEPTION" || /revert/i.test(message) || revertData(error) !== null;
}
