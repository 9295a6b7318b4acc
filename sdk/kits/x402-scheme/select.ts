/**
 * Choosing what to pay: the buyer's spending rules applied to a seller's
 * `svc-credit` options. Pure: the caller supplies "now".
 *
 * Limits are per asset because amounts of different tokens are not
 * comparable (1000 base units of a 6-decimal token and of ETH differ by
 * 10^12). An asset the buyer did not list is not allowed at all.
 */
import { WireError } from "../../errors";
import { type PaymentRequirements, policyFromExtra, requiredAmount } from "../../x402";
import { ZERO_ADDRESS, parseAddress, parseNetwork, parseUint256 } from "../../wire";
import { type OptionRejection, PaymentError } from "./errors";

/** Largest amount (base units) the buyer pays in one request, per asset address (zero address = ETH). */
export type SpendingLimits = Readonly<Record<string, bigint | string | number>>;

/** Parsed limits keyed by lower-case asset address. */
export type ParsedSpendingLimits = ReadonlyMap<string, bigint>;

/** Validates limits once (addresses, non-negative integers); errors name `maxAmountPerRequest.<asset>`. */
export function parseSpendingLimits(
  limits: SpendingLimits,
  field = "maxAmountPerRequest",
): ParsedSpendingLimits {
  if (typeof limits !== "object" || limits === null) {
    throw new WireError(field, "must be an object mapping asset addresses to amounts");
  }
  const parsed = new Map<string, bigint>();
  for (const [asset, amount] of Object.entries(limits)) {
    const address = parseAddress(asset, `${field}.${asset}`).toLowerCase();
    const value = typeof amount === "bigint" || typeof amount === "number" ? amount.toString() : amount;
    parsed.set(address, parseUint256(value, `${field}.${asset}`, { allowZero: true }));
  }
  if (parsed.size === 0) throw new WireError(field, "must allow at least one asset");
  return parsed;
}

export interface SelectionRules {
  /** CAIP-2 network the buyer's signatures are valid on (the signing domain's chain). */
  network: string;
  limits: ParsedSpendingLimits;
  /** Unix seconds. */
  nowSeconds: number;
  /**
   * Whether to pay options that demand a V2 (validation-gated) guarantee.
   * Default true: such a guarantee pays out only after the job is validated.
   */
  acceptValidation?: boolean;
}

export interface SelectedOption {
  /** Index among the answer's `svc-credit` options. */
  index: number;
  requirements: PaymentRequirements;
  amount: bigint;
}

/** Why `requirements` is not acceptable under `rules`, or null when it is. */
export function rejectOption(
  requirements: PaymentRequirements,
  rules: SelectionRules,
): Omit<OptionRejection, "index"> | null {
  if (requirements.network !== rules.network) {
    return { reason: "network_mismatch", message: `network ${requirements.network} is not ${rules.network}` };
  }
  const amount = requiredAmount(requirements);
  if (amount === undefined) return { reason: "amount_missing", message: "the option names no amount" };
  const limit = rules.limits.get(requirements.asset.toLowerCase());
  if (limit === undefined) {
    const what = requirements.asset === ZERO_ADDRESS ? "ETH (zero address)" : requirements.asset;
    return { reason: "asset_not_allowed", message: `asset ${what} is not in maxAmountPerRequest` };
  }
  if (amount > limit) {
    return { reason: "amount_over_limit", message: `amount ${amount} exceeds the limit ${limit}` };
  }
  const policy = policyFromExtra(requirements.extra ?? null);
  if (policy !== null) {
    if (rules.acceptValidation === false) {
      return { reason: "validation_not_accepted", message: "the option demands a V2 validated guarantee" };
    }
    if (policy.deadline <= rules.nowSeconds) {
      return { reason: "policy_expired", message: "the validation deadline has passed" };
    }
    const chainId = parseNetwork(rules.network, "network");
    if (policy.chainId !== undefined && policy.chainId !== chainId) {
      return { reason: "policy_chain_mismatch", message: `validation_chain_id is not ${chainId}` };
    }
  }
  return null;
}

/**
 * The first acceptable option in the seller's order (the seller lists its
 * preference first, as in the reference client). Throws
 * {@link PaymentError} `no_acceptable_option` listing every rejection.
 */
export function selectPaymentOption(
  accepts: readonly PaymentRequirements[],
  rules: SelectionRules,
): SelectedOption {
  const rejections: OptionRejection[] = [];
  for (const [index, requirements] of accepts.entries()) {
    const rejection = rejectOption(requirements, rules);
    if (rejection === null) return { index, requirements, amount: requiredAmount(requirements)! };
    rejections.push({ index, ...rejection });
  }
  const detail = rejections.map((r) => `#${r.index}: ${r.message}`).join("; ");
  throw new PaymentError("no_acceptable_option", `no payment option is acceptable (${detail})`, rejections);
}
