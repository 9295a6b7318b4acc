/**
 * `paywall(options)`: Express middleware that sells routes for x402
 * `svc-credit` payments.
 *
 * - No payment header → 402 with the route's requirements (v1: JSON body
 *   `{x402Version: 1, accepts}`; v2: `PAYMENT-REQUIRED` header and the same
 *   JSON as body).
 * - `X-PAYMENT` (v1) or `PAYMENT-SIGNATURE` (v2) → decode (400 naming the
 *   field when malformed), facilitator `POST /verify` (402 with
 *   `invalidReason` when invalid), then `POST /settle`; the route runs only
 *   once a certificate binding this payment is in hand. The settlement goes
 *   back in `X-PAYMENT-RESPONSE` (v1) / `PAYMENT-RESPONSE` (v2) and to the
 *   app in `res.locals.surety` and `onSettled`.
 * - Facilitator unreachable, failing (5xx) or answering nonsense → 502: the
 *   payment is not at fault and may be presented again.
 * - Replays: the ledger (`ledger`, default in memory) reserves the payment
 *   before settling and tells the facilitator whether this is the seller's
 *   first settlement of it (`settle_attempt`, sdk/x402.ts): a guarantee Core
 *   issued already is then refused as `payment_already_used` unless the
 *   ledger knows this seller submitted it before without serving it (its own
 *   retry, settled and served once). See sdk/kits/x402-scheme/ledger.ts.
 *
 * Answers other than 2xx carry `Cache-Control: no-store`.
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Certificate } from "../../certificate";
import { type WireClaims, toWireClaims } from "../../claims";
import { WireError } from "../../errors";
import { parseNetwork } from "../../wire";
import {
  PAYMENT_ALREADY_USED,
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  SETTLE_ATTEMPT_FIELD,
  type PaymentPayload,
  type PaymentRequirements,
  X_PAYMENT_HEADER,
  type X402Version,
  decodePaymentHeader,
  encodeBase64Json,
  parseSettleResult,
  parseVerifyResult,
  paymentResponseHeaderName,
  toWirePaymentPayload,
} from "../../x402";
import { FacilitatorClient, FacilitatorUnavailableError, type PaywallFetch } from "./facilitator-client";
import {
  DEFAULT_RETENTION_SECONDS,
  MemoryPaymentLedger,
  type PaymentLedger,
  paymentKey,
} from "../x402-scheme/ledger";
import {
  type CompiledRoute,
  type PaywallRoute,
  certificateBindsClaims,
  compileRoutes,
  paymentRequiredJson,
  routeRequirements,
} from "./routes";

/** Default deadline of each facilitator call (settle includes Core's issuance). */
export const DEFAULT_FACILITATOR_TIMEOUT_MS = 15_000;

/** What the app gets for a paid request (`res.locals.surety`, `onSettled`). */
export interface SuretySettlement {
  /** Core's BLS certificate: keep it, it is what the Vault pays against. */
  certificate: Certificate;
  claims: WireClaims;
  /** Guarantee identity, 0x-hex (also the settlement's `transaction`). */
  guaranteeId: string;
  payer: string;
  x402Version: X402Version;
  route: string;
  requirements: PaymentRequirements;
  /** The facilitator's settle answer, as sent back in the settlement header. */
  settlement: Record<string, unknown>;
}

export interface PaywallClock {
  nowSeconds(): number;
}

export interface PaywallOptions {
  facilitatorUrl: string;
  /** Default recipient of every route. */
  payTo: string;
  /** CAIP-2 network, e.g. `eip155:31337`. */
  network: string;
  /** `"GET /weather": {price: "1000", asset: "0x…"}`; paths match `req.path` exactly. */
  routes: Record<string, PaywallRoute>;
  /** Version of the 402 answer to a request without payment (default 2). Payments of both versions are accepted. */
  x402Version?: X402Version;
  /**
   * Called after settlement, before the route runs. If it throws, the route is not served (500) and the
   * same payment may be presented again (the ledger has it as attempted: settled again as this seller's retry).
   */
  onSettled?: (settlement: SuretySettlement, req: Request) => void | Promise<void>;
  fetch?: PaywallFetch;
  facilitatorTimeoutMs?: number;
  /** Replay protection (default: in memory, per process). */
  ledger?: PaymentLedger;
  /** How long a served payment's identity is remembered, after its timestamp (default 3600 s). */
  retentionSeconds?: number;
  clock?: PaywallClock;
  /** Told about facilitator and persistence failures (default: none; the answer carries the reason). */
  onError?: (error: unknown, req: Request) => void;
}

/** `error`/`code` answers of the paywall itself. */
export const PAYWALL_ERRORS = {
  malformedPayment: "malformed_payment",
  paymentAlreadyUsed: PAYMENT_ALREADY_USED,
  paymentInProgress: "payment_in_progress",
  facilitatorUnavailable: "facilitator_unavailable",
  facilitatorError: "facilitator_error",
  invalidCertificate: "invalid_certificate",
  settlementNotStored: "settlement_not_stored",
} as const;

const systemClock: PaywallClock = { nowSeconds: () => Math.floor(Date.now() / 1000) };

function headerValue(req: Request, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(",") : value;
}

function resourceUrl(req: Request, route: CompiledRoute): string {
  return route.resource ?? `${req.protocol}://${req.get("host") ?? "localhost"}${req.baseUrl}${req.path}`;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Builds the middleware; options and routes are validated now (WireError naming the field). */
export function paywall(options: PaywallOptions): RequestHandler {
  parseNetwork(options.network, "network");
  const routes = compileRoutes(options.routes, { payTo: options.payTo, network: options.network });
  const byKey = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
  const unpaidVersion = options.x402Version ?? 2;
  if (unpaidVersion !== 1 && unpaidVersion !== 2) throw new WireError("x402Version", "must be 1 or 2");
  const facilitator = new FacilitatorClient(
    options.facilitatorUrl,
    options.fetch ?? fetch,
    options.facilitatorTimeoutMs ?? DEFAULT_FACILITATOR_TIMEOUT_MS,
  );
  const ledger = options.ledger ?? new MemoryPaymentLedger();
  const retention = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
  const clock = options.clock ?? systemClock;

  const paymentRequired = (
    res: Response,
    route: CompiledRoute,
    version: X402Version,
    resource: string,
    error?: string,
    details: Record<string, unknown> = {},
  ) => {
    const answer = paymentRequiredJson(route, version, resource, error);
    res.status(402).set("Cache-Control", "no-store");
    if (version === 2) res.set(PAYMENT_REQUIRED_HEADER, encodeBase64Json(answer));
    res.json({ ...answer, ...details });
  };
  const fail = (res: Response, status: number, code: string, message: string) => {
    res.status(status).set("Cache-Control", "no-store").json({ error: message, code });
  };

  return async (req: Request, res: Response, next: NextFunction) => {
    const route = byKey.get(`${req.method} ${req.path}`);
    if (route === undefined) return next();
    const resource = resourceUrl(req, route);

    const v1Header = headerValue(req, X_PAYMENT_HEADER);
    const v2Header = headerValue(req, PAYMENT_SIGNATURE_HEADER);
    if (v1Header === undefined && v2Header === undefined) {
      return paymentRequired(res, route, unpaidVersion, resource, "payment required");
    }
    if (v1Header !== undefined && v2Header !== undefined) {
      const message = `send either ${X_PAYMENT_HEADER} or ${PAYMENT_SIGNATURE_HEADER}, not both`;
      return fail(res, 400, PAYWALL_ERRORS.malformedPayment, message);
    }
    const version: X402Version = v1Header !== undefined ? 1 : 2;
    const headerName = version === 1 ? X_PAYMENT_HEADER : PAYMENT_SIGNATURE_HEADER;
    let payload: PaymentPayload;
    try {
      payload = decodePaymentHeader(v1Header ?? v2Header, headerName);
    } catch (error) {
      if (error instanceof WireError) return fail(res, 400, PAYWALL_ERRORS.malformedPayment, error.message);
      throw error;
    }
    if (payload.x402Version !== version) {
      const message = `${headerName}: carries an x402Version ${payload.x402Version} payload; ${headerName} is for version ${version}`;
      return fail(res, 400, PAYWALL_ERRORS.malformedPayment, message);
    }

    const claims = payload.payload.claims;
    const key = paymentKey(route.network, claims.user, claims.reqId);
    const reservation = await ledger.reserve(key, claims.timestamp + retention, clock.nowSeconds());
    if (reservation === "used") {
      return paymentRequired(res, route, version, resource, PAYWALL_ERRORS.paymentAlreadyUsed);
    }
    if (reservation === "in_progress") {
      return fail(
        res,
        409,
        PAYWALL_ERRORS.paymentInProgress,
        "this payment is being processed by another request",
      );
    }

    // What the ledger does with the reservation unless the resource is served: `release` while nothing
    // can have been issued, `attempted` once the settlement is submitted and its outcome unknown.
    const afterwards: { step: "release" | "attempted" | "used" } = { step: "release" };
    let served = false;
    try {
      const requirements = routeRequirements(route, version, resource);
      const wirePayload = toWirePaymentPayload(payload);
      const body = {
        x402Version: version,
        paymentPayload: wirePayload,
        paymentRequirements: requirements,
      };
      const settleBody = {
        ...body,
        paymentPayload: {
          ...wirePayload,
          payload: {
            ...wirePayload.payload,
            [SETTLE_ATTEMPT_FIELD]: reservation === "retry" ? "retry" : "first",
          },
        },
      };
      const settlement = await verifyThenSettle(
        body,
        settleBody,
        claims,
        route,
        version,
        resource,
        requirements,
      );
      if (settlement === null) return;
      res.set(paymentResponseHeaderName(version), encodeBase64Json(settlement.settlement));
      res.locals.surety = settlement;
      try {
        await options.onSettled?.(settlement, req);
      } catch (error) {
        options.onError?.(error, req);
        res.removeHeader(paymentResponseHeaderName(version));
        const message = "the settlement could not be stored; present the same payment again";
        return fail(res, 500, PAYWALL_ERRORS.settlementNotStored, message);
      }
      await ledger.markUsed(key);
      served = true;
      next();
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) {
        options.onError?.(error, req);
        return fail(res, 502, PAYWALL_ERRORS.facilitatorUnavailable, error.message);
      }
      throw error;
    } finally {
      if (!served) {
        if (afterwards.step === "used") await ledger.markUsed(key);
        else if (afterwards.step === "attempted") await ledger.markAttempted(key);
        else await ledger.release(key);
      }
    }

    /** Verify, then settle; answers the buyer and returns null when the payment does not go through. */
    async function verifyThenSettle(
      body: Record<string, unknown>,
      settleRequest: Record<string, unknown>,
      paidClaims: PaymentPayload["payload"]["claims"],
      paidRoute: CompiledRoute,
      paidVersion: X402Version,
      paidResource: string,
      requirements: PaymentRequirements,
    ): Promise<SuretySettlement | null> {
      const verify = await facilitator.verify(body);
      if (verify.status >= 500) {
        const error = text((verify.body as { error?: unknown })?.error) ?? `status ${verify.status}`;
        fail(res, 502, PAYWALL_ERRORS.facilitatorError, `the facilitator could not verify: ${error}`);
        return null;
      }
      if (verify.status !== 200) {
        const error = text((verify.body as { error?: unknown })?.error) ?? `status ${verify.status}`;
        paymentRequired(res, paidRoute, paidVersion, paidResource, "invalid_payment", {
          invalidMessage: error,
        });
        return null;
      }
      let verdict;
      try {
        verdict = parseVerifyResult(verify.body, "verify");
      } catch (error) {
        if (!(error instanceof WireError)) throw error;
        throw new FacilitatorUnavailableError(
          `the facilitator's /verify answer is malformed: ${error.message}`,
        );
      }
      if (!verdict.isValid) {
        const reason = verdict.invalidReason ?? "invalid_payment";
        const message = text((verify.body as { invalidMessage?: unknown }).invalidMessage) ?? null;
        paymentRequired(res, paidRoute, paidVersion, paidResource, reason, {
          invalidReason: reason,
          invalidMessage: message,
        });
        return null;
      }

      afterwards.step = "attempted"; // from here on Core may issue it whatever the seller hears back
      const settle = await facilitator.settle(settleRequest);
      const settleBody = settle.body as Record<string, unknown>;
      const settleError =
        text(settleBody?.errorMessage) ?? text(settleBody?.error) ?? `status ${settle.status}`;
      if (settle.status === 400) {
        // Refused: nothing was issued now; a replay refused stays used.
        const reason = text(settleBody?.errorReason) ?? text(settleBody?.error);
        afterwards.step = reason === PAYMENT_ALREADY_USED ? "used" : "release";
      }
      if (settle.status >= 500 || (settle.status !== 200 && settle.status !== 400)) {
        fail(
          res,
          502,
          text(settleBody?.error) ?? PAYWALL_ERRORS.facilitatorError,
          `settlement failed: ${settleError}`,
        );
        return null;
      }
      let result;
      try {
        result = parseSettleResult(settle.body, "settle");
      } catch (error) {
        if (!(error instanceof WireError)) throw error;
        throw new FacilitatorUnavailableError(
          `the facilitator's /settle answer is malformed: ${error.message}`,
        );
      }
      if (!result.success || result.certificate === null) {
        const reason = text(settleBody.errorReason) ?? result.error ?? "settlement_failed";
        res.set(paymentResponseHeaderName(paidVersion), encodeBase64Json(settleBody));
        paymentRequired(res, paidRoute, paidVersion, paidResource, reason, {
          invalidReason: reason,
          invalidMessage: settleError,
        });
        return null;
      }
      const binding = certificateBindsClaims(result.certificate, paidClaims);
      if (!binding.ok) {
        fail(
          res,
          502,
          PAYWALL_ERRORS.invalidCertificate,
          `the facilitator's certificate: ${binding.problem}`,
        );
        return null;
      }
      return {
        certificate: result.certificate,
        claims: toWireClaims(paidClaims),
        guaranteeId: binding.guaranteeId,
        payer: paidClaims.user,
        x402Version: paidVersion,
        route: paidRoute.key,
        requirements,
        settlement: settleBody,
      };
    }
  };
}
