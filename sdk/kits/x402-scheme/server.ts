/**
 * The seller's side of `svc-credit` in the official x402 server packages
 * (`@x402/express`, `@x402/hono`, `@x402/core/server`): a
 * `SchemeNetworkServer` for `x402ResourceServer.register(network, scheme)`.
 *
 * It turns a route's price into requirements whose `extra` carries what the
 * buyer needs to sign: the EIP-712 domain (`contract_address` = Vault,
 * `chain_id`, `eip712_name`, `eip712_version`, as advertised by the
 * facilitator's `/supported`, or pinned here) and, for a V2 guarantee, the
 * validation policy (flat, snake_case; see `POLICY_EXTRA_FIELDS`).
 *
 * Payment flow: `upfront`. The x402 server settles before the route handler
 * runs (our facilitator's `/settle` verifies first), so the handler runs only
 * once Core's certificate is in hand, as the interface contract's flow says.
 *
 * Replay: settling the same signed guarantee again is idempotent at Core (it
 * answers its stored certificate, locking nothing again), so the seller must
 * tell a replay from its own retry. The scheme's settle hooks reserve the
 * payment's identity (network, payer, req_id) in the seller's
 * {@link PaymentLedger} before settling, and `enrichSettlementPayload` tells
 * the facilitator what the ledger knows (`settle_attempt`, sdk/x402.ts):
 * `"first"` (never submitted by this seller: a guarantee Core issued already
 * is a replay, refused by the facilitator as `payment_already_used`, so a
 * seller that restarted or a replica without the ledger serves nothing) or
 * `"retry"` (submitted before, outcome unknown: the issued guarantee is this
 * seller's, served once). A refused payment is released, an interrupted one
 * marked attempted, a settled one kept; a payment the ledger has as used is
 * refused with `payment_already_used` (402) before any settlement, one in
 * flight with `payment_in_progress`.
 */
import type {
  AssetAmount,
  Network,
  PaymentFlowConfig,
  PaymentRequirements as X402PaymentRequirements,
  Price,
  SchemeNetworkServer,
  SchemeServerHooks,
  SettleContext,
  SupportedKind,
} from "@x402/core/types";
import { type Certificate } from "../../certificate";
import {
  type ValidationPolicy,
  type WireValidationPolicy,
  parseSignedGuarantee,
  toWireValidationPolicy,
} from "../../claims";
import {
  DEFAULT_RETENTION_SECONDS,
  MemoryPaymentLedger,
  type PaymentLedger,
  type ReservationResult,
  paymentKey,
} from "./ledger";
import {
  type GuaranteeDomainParams,
  type GuaranteeTypedDataDomain,
  guaranteeTypedDataDomain,
} from "../../eip712";
import { WireError } from "../../errors";
import { formatNetwork, formatUint, parseAddress, parseNetwork, parseObject, parseUint256 } from "../../wire";
import {
  PAYMENT_ALREADY_USED,
  SCHEME,
  SETTLE_ATTEMPT_FIELD,
  type SettleAttempt,
  domainDifference,
  domainFromExtra,
  extraFromDomain,
  parsePaymentRequirements,
  parseSettleResult,
  policyFromExtra,
} from "../../x402";

/** The x402 asset-transfer-method key of a scheme with none on the wire. */
export const DEFAULT_ASSET_TRANSFER_METHOD = "default";

/** Settle before the handler; there is no verify-only flow (see the module comment). */
export const SURETY_PAYMENT_FLOWS: Readonly<Record<string, PaymentFlowConfig>> = Object.freeze({
  [DEFAULT_ASSET_TRANSFER_METHOD]: Object.freeze({
    supported: ["upfront"] as const,
    default: "upfront" as const,
  }),
});

export interface MoneyAsset {
  /** Token address (the zero address for ETH). */
  address: string;
  decimals: number;
}

export interface SuretyServerSchemeOptions {
  /**
   * The signing domain to publish. When absent it is taken from the
   * facilitator's `/supported` kind (`extra`); when both are present they must agree.
   */
  domain?: GuaranteeDomainParams;
  /**
   * The asset that money prices (`"$0.01"`, `"0.01"`, `0.01`) are paid in.
   * Without it a price must be `{asset, amount}` in base units (see {@link suretyPrice}).
   */
  moneyAsset?: MoneyAsset;
  /** Used payments (replay protection); default one in-process {@link MemoryPaymentLedger}. */
  ledger?: PaymentLedger;
  /** How long a used payment is remembered after its `claims.timestamp` (default 3600 s; must exceed the facilitator's 600 s window). */
  retentionSeconds?: number;
  clock?: { nowSeconds(): number };
}

/** `errorReason` of a replayed payment (402): the ledger has it as used, or the facilitator found it issued. */
export { PAYMENT_ALREADY_USED };
/** `errorReason` of a payment presented again while its first settlement is in flight (402). */
export const PAYMENT_IN_PROGRESS = "payment_in_progress";
/** `errorReason` of a payment header that carries the seller's `settle_attempt` field (402). */
export const SETTLE_ATTEMPT_FROM_BUYER = "invalid_payload";

/**
 * What the ledger's reservation means for the facilitator, or null when the
 * buyer must be refused: `reserved` → `"first"`, `retry` → `"retry"`.
 */
export function settleAttemptOf(reservation: ReservationResult): SettleAttempt | null {
  if (reservation === "reserved") return "first";
  if (reservation === "retry") return "retry";
  return null;
}

/**
 * How a failed settlement leaves the ledger: the facilitator refused the payment as a replay
 * (`used`), refused it otherwise with a 4xx, so nothing was issued (`release`), or the outcome is
 * unknown (a timeout, a 5xx, an unreadable answer: Core may have issued it; `attempted`, so that the
 * same payment presented again is settled as this seller's retry).
 */
export function ledgerStepAfterFailure(error: unknown): "used" | "release" | "attempted" {
  const settle = error as { name?: unknown; statusCode?: unknown; errorReason?: unknown } | null;
  if (settle === null || typeof settle !== "object" || settle.name !== "SettleError") return "attempted";
  if (settle.errorReason === PAYMENT_ALREADY_USED) return "used";
  const status = settle.statusCode;
  return typeof status === "number" && status >= 400 && status < 500 ? "release" : "attempted";
}

/** `svc-credit` for `new x402ResourceServer(facilitatorClient).register(network, scheme)`. */
export class SuretyServerScheme implements SchemeNetworkServer {
  readonly scheme = SCHEME;
  readonly defaultAssetTransferMethod = DEFAULT_ASSET_TRANSFER_METHOD;
  readonly paymentFlows = SURETY_PAYMENT_FLOWS;
  readonly schemeHooks: SchemeServerHooks;
  /** Adds the seller's `settle_attempt` to the payload the facilitator settles (see the module comment). */
  readonly enrichSettlementPayload: NonNullable<SchemeNetworkServer["enrichSettlementPayload"]>;
  private readonly pinned: GuaranteeTypedDataDomain | null;
  private readonly moneyAsset: MoneyAsset | null;

  constructor(options: SuretyServerSchemeOptions = {}) {
    const ledger = options.ledger ?? new MemoryPaymentLedger();
    const retention = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
    if (!Number.isSafeInteger(retention) || retention <= 0) {
      throw new WireError("retentionSeconds", "must be a positive integer");
    }
    const clock = options.clock ?? { nowSeconds: () => Math.floor(Date.now() / 1000) };
    // The reservation's verdict, from onBeforeSettle to enrichSettlementPayload (the same payload object).
    const attempts = new WeakMap<object, SettleAttempt>();
    this.schemeHooks = {
      onBeforeSettle: async (context) => {
        const identity = paymentIdentity(context);
        if (identity === null) return; // malformed: the facilitator refuses it with a reason naming the field
        if (SETTLE_ATTEMPT_FIELD in (context.paymentPayload.payload as object)) {
          const message = `paymentPayload.payload.${SETTLE_ATTEMPT_FIELD} is the seller's to set, not the buyer's`;
          return { abort: true, reason: SETTLE_ATTEMPT_FROM_BUYER, message };
        }
        const outcome = await ledger.reserve(
          identity.key,
          identity.timestamp + retention,
          clock.nowSeconds(),
        );
        if (outcome === "used") {
          return { abort: true, reason: PAYMENT_ALREADY_USED, message: "this payment was already used" };
        }
        if (outcome === "in_progress") {
          return { abort: true, reason: PAYMENT_IN_PROGRESS, message: "this payment is being settled" };
        }
        attempts.set(context.paymentPayload, settleAttemptOf(outcome) ?? "first");
      },
      onAfterSettle: async (context) => {
        const identity = paymentIdentity(context);
        if (identity !== null) await ledger.markUsed(identity.key);
      },
      onSettleFailure: async (context) => {
        const identity = paymentIdentity(context);
        if (identity === null) return;
        const step = ledgerStepAfterFailure(context.error);
        if (step === "used") await ledger.markUsed(identity.key);
        else if (step === "release") await ledger.release(identity.key);
        else await ledger.markAttempted(identity.key);
      },
    };
    this.enrichSettlementPayload = async (context) => {
      if (paymentIdentity(context) === null) return;
      // Without a reservation (hooks not run) the safe declaration is "first": an issued guarantee is refused.
      return { [SETTLE_ATTEMPT_FIELD]: attempts.get(context.paymentPayload) ?? "first" };
    };
    this.pinned = options.domain === undefined ? null : guaranteeTypedDataDomain(options.domain);
    if (options.moneyAsset !== undefined) {
      const { decimals } = options.moneyAsset;
      if (!Number.isSafeInteger(decimals) || decimals < 0 || decimals > 77) {
        throw new WireError("moneyAsset.decimals", "must be an integer from 0 to 77");
      }
      this.moneyAsset = { address: parseAddress(options.moneyAsset.address, "moneyAsset.address"), decimals };
    } else {
      this.moneyAsset = null;
    }
  }

  /**
   * `{asset, amount, extra?}` passes through checked (address, amount > 0,
   * a well-formed policy in `extra`); money is converted with `moneyAsset`
   * exactly (more fractional digits than the asset has is an error, never rounded).
   */
  async parsePrice(price: Price, network: Network): Promise<AssetAmount> {
    parseNetwork(network, "network");
    if (typeof price === "object" && price !== null) {
      const wire = parseObject(price, "price");
      const asset = parseAddress(wire.asset, "price.asset");
      const amount = parseUint256(wire.amount, "price.amount");
      const parsed: AssetAmount = { asset, amount: formatUint(amount) };
      if (wire.extra !== undefined) {
        const extra = parseObject(wire.extra, "price.extra");
        policyFromExtra(extra, "price.extra");
        parsed.extra = extra;
      }
      return parsed;
    }
    if (this.moneyAsset === null) {
      throw new WireError(
        "price",
        `"${String(price)}" is money, but svc-credit prices are {asset, amount} in base units unless the scheme is given a moneyAsset`,
      );
    }
    return {
      asset: this.moneyAsset.address,
      amount: formatUint(moneyToBaseUnits(price, this.moneyAsset.decimals)),
    };
  }

  async enhancePaymentRequirements(
    paymentRequirements: X402PaymentRequirements,
    supportedKind: SupportedKind,
    _facilitatorExtensions: string[] = [],
  ): Promise<X402PaymentRequirements> {
    const domain = this.domainFor(paymentRequirements.network, supportedKind);
    const enhanced = {
      ...paymentRequirements,
      extra: { ...(paymentRequirements.extra ?? {}), ...extraFromDomain(domain) },
    };
    // Everything the facilitator will check for shape (addresses, amount, policy) fails here, naming the field.
    parsePaymentRequirements(enhanced, "paymentRequirements");
    return enhanced;
  }

  validateFacilitatorSupport(network: Network, supportedKind: SupportedKind): string | void {
    try {
      this.domainFor(network, supportedKind);
    } catch (error) {
      return (error as Error).message;
    }
  }

  private domainFor(network: string, supportedKind: SupportedKind): GuaranteeTypedDataDomain {
    const advertised = domainFromExtra(supportedKind.extra ?? null, "supported.kinds[].extra");
    if (this.pinned !== null && advertised !== null && domainDifference(this.pinned, advertised) !== null) {
      throw new Error(
        `svc-credit: the facilitator signs for Vault ${advertised.verifyingContract} (chain ${advertised.chainId}), ` +
          `the scheme is pinned to ${this.pinned.verifyingContract} (chain ${this.pinned.chainId})`,
      );
    }
    const domain = this.pinned ?? advertised;
    if (domain === null) {
      throw new Error(
        "svc-credit: the facilitator advertises no signing domain; pass `domain` to the scheme",
      );
    }
    if (formatNetwork(domain.chainId) !== network) {
      throw new Error(
        `svc-credit: network ${network} is not the signing domain's ${formatNetwork(domain.chainId)}`,
      );
    }
    return domain;
  }
}

type PaymentIdentity = { key: string; timestamp: number } | null;

/**
 * Identities by payload object and network: the settle hooks and `enrichSettlementPayload` each ask for the
 * identity of the same payment (three full parses of the signed guarantee per settlement otherwise).
 */
const identities = new WeakMap<object, { network: string; identity: PaymentIdentity }>();

/** The ledger key of the guarantee in a payment, or null when the payload is not a signed guarantee. */
function paymentIdentity(context: SettleContext): PaymentIdentity {
  const payload = context.paymentPayload.payload;
  const network = context.requirements.network;
  if (typeof payload !== "object" || payload === null) return parsePaymentIdentity(context);
  const known = identities.get(payload);
  if (known !== undefined && known.network === network) return known.identity;
  const identity = parsePaymentIdentity(context);
  identities.set(payload, { network, identity });
  return identity;
}

function parsePaymentIdentity(context: SettleContext): PaymentIdentity {
  try {
    const { claims } = parseSignedGuarantee(context.paymentPayload.payload, "paymentPayload.payload");
    return {
      key: paymentKey(context.requirements.network, claims.user, claims.reqId),
      timestamp: claims.timestamp,
    };
  } catch (error) {
    if (error instanceof WireError) return null;
    throw error;
  }
}

/** `"$0.01"`, `"0.01"` or `0.01` in base units of a `decimals` asset; exact or an error. */
export function moneyToBaseUnits(money: string | number, decimals: number): bigint {
  const text = typeof money === "number" ? money.toString() : money.trim().replace(/^\$\s*/, "");
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (match === null) throw new WireError("price", `"${String(money)}" is not a decimal amount`);
  const fraction = match[2] ?? "";
  if (fraction.replace(/0+$/, "").length > decimals) {
    throw new WireError("price", `"${String(money)}" has more than ${decimals} decimals`);
  }
  const units = BigInt(match[1] + fraction.padEnd(decimals, "0").slice(0, decimals));
  if (units === 0n) throw new WireError("price", "must be greater than zero");
  return units;
}

export interface SuretyPriceInput {
  /** Token address (the zero address for ETH). */
  asset: string;
  /** Base units. */
  amount: bigint | number | string;
  /** Demand a V2 guarantee under this validation policy (flat in `extra`). */
  validationPolicy?: ValidationPolicy | WireValidationPolicy;
}

/** A route price for `svc-credit`: `{asset, amount}` in base units, with the V2 policy in `extra` when given. */
export function suretyPrice(input: SuretyPriceInput): AssetAmount {
  const price: AssetAmount = {
    asset: parseAddress(input.asset, "asset"),
    amount: formatUint(parseUint256(input.amount.toString(), "amount")),
  };
  if (input.validationPolicy !== undefined) {
    const policy = input.validationPolicy;
    const wire = "registry" in policy ? toWireValidationPolicy(policy) : policy;
    policyFromExtra(wire, "validationPolicy"); // checked now, not on the first request
    price.extra = { ...wire };
  }
  return price;
}

/**
 * The certificate of a successful settlement as the official packages relay
 * it (the facilitator's settle answer, an `onAfterSettle` hook's `result`, or
 * a decoded `PAYMENT-RESPONSE` header): `extra.certificate`. Null when the
 * settlement failed; a success without a readable certificate is an error.
 */
export function certificateOfSettlement(settlement: unknown): Certificate | null {
  const parsed = parseSettleResult(settlement, "settlement");
  return parsed.success ? parsed.certificate : null;
}
