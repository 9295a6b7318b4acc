/**
 * Errors raised by the protocol layer. Each names the wire field at fault so
 * that HTTP layers can answer 400 with a message an integrator can act on.
 */
export class WireError extends Error {
  override readonly name: string = "WireError";

  constructor(
    /** Dotted path of the offending field, e.g. `claims.validation_policy.job_hash`. */
    readonly field: string,
    /** What is wrong, without the field name (it is prefixed in `message`). */
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/** A signature that is well-formed but does not authorise the claims. */
export class SignatureError extends Error {
  override readonly name = "SignatureError";
}

/**
 * The error answer of every Core and facilitator route except `/settle`
 * (docs/protocol.md, "Wire values"): a human message naming the field at fault and a
 * stable machine-readable code, plus route-specific fields (e.g. the stored
 * `certificate` of a 409).
 */
export interface ErrorBody {
  error: string;
  code: string;
  [extra: string]: unknown;
}
