/**
 * `wrapFetch`: a fetch that pays x402 `svc-credit` 402 answers by itself.
 *
 * One request, at most one payment: on a 402 it builds and signs one
 * guarantee, retries once with the payment header, and returns whatever
 * that retry answers (a second 402 included) without paying again. The
 * paid response keeps the seller's settlement header; its decoded content
 * and the payment are available through {@link paymentReceipt}.
 */
import { WireError } from "../errors";
import type { GuaranteeDomainParams, GuaranteeTypedDataDomain } from "../eip712";
import type { SigningScheme } from "../claims";
import {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  type SettleResult,
  X_PAYMENT_HEADER,
  X_PAYMENT_RESPONSE_HEADER,
  decodePaymentResponseHeader,
  paymentResponseHeaderName,
} from "../x402";
import { domainFromPublicParams } from "./domain";
import { PaymentError } from "./errors";
import { type PayerSigner, type PreparedPayment, createPayment, randomReqId } from "./payment";
import { readPaymentRequired } from "./required";
import { type SpendingLimits, parseSpendingLimits } from "./select";

/** The fetch signature we wrap and return (the global `fetch` fits). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface BuyerClock {
  /** Unix seconds. */
  nowSeconds(): number;
}

const systemClock: BuyerClock = { nowSeconds: () => Math.floor(Date.now() / 1000) };

export interface WrapFetchOptions {
  /** The payer's wallet (an ethers Signer). The private key never leaves it. */
  signer: PayerSigner;
  /** The EIP-712 domain to sign under. When absent it is read once from `coreUrl`. */
  domain?: GuaranteeDomainParams;
  /** Core's base URL; `GET /core/public-params` gives the domain when `domain` is not given. */
  coreUrl?: string;
  /** Per-request ceiling per asset address (zero address = ETH); unlisted assets are never paid. */
  maxAmountPerRequest: SpendingLimits;
  /** Default `eip712`. */
  signingScheme?: SigningScheme;
  /** Pay options that demand a V2 validated guarantee (default true). */
  acceptValidation?: boolean;
  clock?: BuyerClock;
  /** Source of `req_id`s; default 128 random bits per payment. */
  reqId?: () => bigint;
  /** Called with the signed payment just before the paid retry is sent (e.g. to log or persist it). */
  onPayment?: (payment: PreparedPayment) => void | Promise<void>;
}

export interface PaymentReceipt {
  payment: PreparedPayment;
  /** The decoded settlement header (`X-PAYMENT-RESPONSE` / `PAYMENT-RESPONSE`), or null. */
  settlement: SettleResult | null;
  /** Why `settlement` is null: header missing or unreadable. */
  settlementError: string | null;
}

const receipts = new WeakMap<Response, PaymentReceipt>();

/** The payment made for a response returned by a wrapped fetch; undefined when it did not pay. */
export function paymentReceipt(response: Response): PaymentReceipt | undefined {
  return receipts.get(response);
}

/**
 * Decodes the settlement header of a paid response (the version's own name
 * first, then the other one). Never throws: the payment has been made, so a
 * bad header is reported, not raised.
 */
export function readSettlement(
  headers: Headers,
  x402Version: 1 | 2,
): { settlement: SettleResult | null; settlementError: string | null } {
  const names = [
    paymentResponseHeaderName(x402Version),
    paymentResponseHeaderName(x402Version === 1 ? 2 : 1),
  ];
  for (const name of names) {
    const value = headers.get(name);
    if (value === null) continue;
    try {
      return { settlement: decodePaymentResponseHeader(value, name), settlementError: null };
    } catch (error) {
      if (error instanceof WireError) return { settlement: null, settlementError: error.message };
      throw error;
    }
  }
  return {
    settlement: null,
    settlementError: `no ${X_PAYMENT_RESPONSE_HEADER} or ${PAYMENT_RESPONSE_HEADER} header`,
  };
}

/** Reads the signing domain from Core's `GET /core/public-params`. */
export async function fetchGuaranteeDomain(
  coreUrl: string,
  fetchImpl: FetchLike = fetch,
): Promise<GuaranteeTypedDataDomain> {
  const url = new URL("/core/public-params", coreUrl).toString();
  let response: Response;
  try {
    response = await fetchImpl(url, { headers: { accept: "application/json" } });
  } catch (error) {
    throw new PaymentError("domain_unavailable", `GET ${url} failed: ${(error as Error).message}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new PaymentError("domain_unavailable", `GET ${url} answered ${response.status}`);
  }
  try {
    return domainFromPublicParams(await response.json());
  } catch (error) {
    const detail = error instanceof WireError ? error.message : "body is not JSON";
    throw new PaymentError("domain_unavailable", `GET ${url}: ${detail}`);
  }
}

async function jsonOrUndefined(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Wraps `fetchImpl` so that a 402 `svc-credit` answer is paid once and the
 * request retried once. Options are validated here (a bad limit throws a
 * WireError naming `maxAmountPerRequest.<asset>`). The request is cloned
 * before the first attempt (a streamed body is teed), so the paid retry
 * sends the same method, headers and body.
 */
export function wrapFetch(fetchImpl: FetchLike, options: WrapFetchOptions): FetchLike {
  const limits = parseSpendingLimits(options.maxAmountPerRequest);
  if (options.domain === undefined && options.coreUrl === undefined) {
    throw new WireError("domain", "is required when coreUrl is not given");
  }
  const clock = options.clock ?? systemClock;
  const nextReqId = options.reqId ?? randomReqId;
  let domain: Promise<GuaranteeDomainParams> | undefined =
    options.domain !== undefined ? Promise.resolve(options.domain) : undefined;
  const loadDomain = (): Promise<GuaranteeDomainParams> => {
    domain ??= fetchGuaranteeDomain(options.coreUrl!, fetchImpl).catch((error: unknown) => {
      domain = undefined; // try again on the next payment
      throw error;
    });
    return domain;
  };

  return async (input, init) => {
    const request = new Request(input, init);
    // A request that already carries a payment is the caller's business: never add a second one.
    if (request.headers.has(X_PAYMENT_HEADER) || request.headers.has(PAYMENT_SIGNATURE_HEADER)) {
      return fetchImpl(request);
    }
    const retry = request.clone();
    const first = await fetchImpl(request);
    if (first.status !== 402) return first;

    const answer = readPaymentRequired(
      first.headers.get(PAYMENT_REQUIRED_HEADER),
      await jsonOrUndefined(first),
    );
    const payment = await createPayment(answer, {
      signer: options.signer,
      domain: await loadDomain(),
      limits,
      nowSeconds: clock.nowSeconds(),
      reqId: nextReqId(),
      signingScheme: options.signingScheme,
      acceptValidation: options.acceptValidation,
    });
    await options.onPayment?.(payment);
    retry.headers.set(payment.header.name, payment.header.value);
    const paid = await fetchImpl(retry);
    receipts.set(paid, { payment, ...readSettlement(paid.headers, payment.x402Version) });
    return paid;
  };
}
