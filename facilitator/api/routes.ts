/**
 * The four facilitator endpoints (interface spec: POST /verify, POST /settle,
 * GET /supported, GET /health). Request parsing comes first so that a
 * malformed body is a 400 even when Core is away.
 */
import { type RequestHandler, type Response, Router } from "express";
import { checkDeadlineCap } from "../../sdk/claim-checks";
import type { FacilitatorRequest } from "../../sdk/x402";
import type { ErrorBody } from "../../sdk/errors";
import { sameAddress } from "../../sdk/wire";
import { sendJson } from "../../runtime/json-answer";
import { errorAnswer, jsonAnswer, jsonBody, mount, operation, schemaRef } from "../../runtime/api-operations";
import { settlePayment } from "../settle";
import { SIGNATURE_CHECK_UNAVAILABLE } from "../contract-wallets";
import {
  parsePaymentRequest,
  SignatureCheckUnavailableError,
  verifyPaymentWithContractWallets,
} from "../verify";
import { VAULT_MISMATCH } from "../vault-check";
import type { DeploymentParams } from "../deployment";
import { DeploymentUnavailableError, type FacilitatorContext, loadDeployment } from "./context";
import {
  settleFailureBody,
  settleOutcomeBody,
  supportedBody,
  type VerifyBody,
  verifyBody,
} from "./responses";

/** `code` of a 500 answer when Core's public params cannot be loaded. */
export const DEPLOYMENT_UNAVAILABLE = "core_unavailable";

const UNSUPPORTED_MEDIA =
  "`Content-Encoding` other than identity, gzip, deflate or br; charset other than UTF-8.";
const object = (properties: Record<string, unknown>) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** The facilitator's operations: mounted below (and `/settle` by app.ts), described in its OpenAPI document. */
export const FACILITATOR_OPERATIONS = {
  verify: operation("post", "/verify", {
    summary: "Check a payment against the requirements and the deployment (no Core round trip)",
    requestBody: jsonBody(schemaRef("VerifyRequest")),
    responses: {
      "200": jsonAnswer(
        "Checked: `isValid` false comes with an `invalidReason`.",
        schemaRef("VerifyResponse"),
      ),
      "400": errorAnswer("Malformed body or envelope; `error` starts with the field path.", [
        "invalid_request",
        "malformed_json",
        "undecodable_body",
      ]),
      "413": errorAnswer("Body larger than 64 KiB (after decoding).", ["body_too_large"]),
      "415": errorAnswer(UNSUPPORTED_MEDIA, ["unsupported_encoding", "unsupported_charset"]),
      "500": errorAnswer(
        "Core's public params cannot be loaded, the chain cannot be asked for a contract-wallet payer's registered signing key, or an unexpected failure.",
        [DEPLOYMENT_UNAVAILABLE, SIGNATURE_CHECK_UNAVAILABLE, "internal_error"],
      ),
    },
  }),
  settle: operation("post", "/settle", {
    summary: "Re-verify, submit the guarantee to Core, check and return Core's certificate",
    requestBody: jsonBody(schemaRef("SettleRequest")),
    responses: {
      "200": jsonAnswer(
        "Settled (a retry of the same signed guarantee is idempotent).",
        schemaRef("SettleSuccess"),
      ),
      "400": jsonAnswer(
        "The payment cannot succeed as sent (seller answers 402).",
        schemaRef("SettleFailure"),
      ),
      "413": jsonAnswer("Body larger than 64 KiB (after decoding).", schemaRef("SettleFailure")),
      "415": jsonAnswer(UNSUPPORTED_MEDIA, schemaRef("SettleFailure")),
      "500": jsonAnswer(
        "Facilitator or Core at fault; the same payment may succeed later.",
        schemaRef("SettleFailure"),
      ),
    },
  }),
  supported: operation("get", "/supported", {
    summary: "Payment kinds: `svc-credit` on Core's network, once per x402 version",
    responses: {
      "200": jsonAnswer("Supported kinds.", schemaRef("Supported")),
      "500": errorAnswer("Core's public params cannot be loaded.", [
        DEPLOYMENT_UNAVAILABLE,
        "internal_error",
      ]),
    },
  }),
  health: operation("get", "/health", {
    summary: "Core answers now and its public params load",
    responses: {
      "200": jsonAnswer("Available.", object({ status: { const: "ok" } })),
      "503": jsonAnswer(
        "Core or its params unavailable.",
        object({ status: { const: "fail" }, error: { type: "string" } }),
      ),
    },
  }),
};

/**
 * The sdk's parser of a `/verify` or `/settle` body (parsePaymentRequest, the one definition of the x402
 * envelope), as middleware: the parsed request in `res.locals.paymentRequest`; a malformed body throws its
 * WireError (→ 400 in the route's failure shape, api/errors.ts).
 */
const paymentRequest: RequestHandler = (req, res, next) => {
  res.locals.paymentRequest = parsePaymentRequest(req.body);
  next();
};

function paymentRequestOf(res: Response): FacilitatorRequest {
  return res.locals.paymentRequest as FacilitatorRequest;
}

/** When each context last reloaded Core's public params for a deadline its cached cap refused (clock seconds). */
const capReloadedAt = new WeakMap<FacilitatorContext, number>();

/**
 * The deployment to check `request` against. Core's V2 deadline cap (`latest_validation_deadline`) moves
 * forward with chain time, so cached public params (up to `publicParamsTtlSeconds` old) can refuse a
 * deadline Core accepts now: when the cached cap refuses this payment's deadline, the params are loaded
 * again (at most once per second per process, so refused payments cannot make every request a Core round
 * trip) and the payment is checked against them. A pinned deployment is used as it is; a failed reload
 * keeps the cached params.
 */
async function deploymentForDeadline(
  context: FacilitatorContext,
  request: FacilitatorRequest,
  deployment: DeploymentParams,
): Promise<DeploymentParams> {
  if (context.pinnedDeployment !== null) return deployment;
  const { claims } = request.paymentPayload.payload;
  if (checkDeadlineCap(claims, { latest: deployment.latestValidationDeadline }) === null) return deployment;
  const now = context.clock.nowSeconds();
  const last = capReloadedAt.get(context);
  if (last !== undefined && last >= now) return deployment;
  capReloadedAt.set(context, now);
  try {
    return await context.core.getDeployment({ fresh: true });
  } catch (error) {
    context.logger.warn({ err: error }, "public params could not be reloaded for the V2 deadline cap");
    return deployment;
  }
}

/** A status and the JSON document to answer with. */
export interface JsonAnswer {
  status: number;
  body: VerifyBody | ErrorBody;
}

/**
 * `/verify` from a parsed JSON body to its answer. Throws WireError naming
 * the field for a malformed request (→ 400 through the error mapping).
 */
export async function answerVerify(context: FacilitatorContext, body: unknown): Promise<JsonAnswer> {
  return answerParsedVerify(context, parsePaymentRequest(body));
}

/** `/verify` from a parsed request to its answer. */
async function answerParsedVerify(
  context: FacilitatorContext,
  request: FacilitatorRequest,
): Promise<JsonAnswer> {
  let deployment;
  try {
    deployment = await loadDeployment(context);
  } catch (error) {
    if (!(error instanceof DeploymentUnavailableError)) throw error;
    return { status: 500, body: { error: error.message, code: DEPLOYMENT_UNAVAILABLE } };
  }
  deployment = await deploymentForDeadline(context, request, deployment);
  const { clock, timestampWindow, contractWallets } = context;
  try {
    const outcome = await verifyPaymentWithContractWallets(request, {
      deployment,
      clock,
      timestampWindow,
      contractWallets,
    });
    return { status: 200, body: verifyBody(outcome) };
  } catch (error) {
    if (!(error instanceof SignatureCheckUnavailableError)) throw error;
    context.logger.warn({ reason: error.message }, "signing key check failed");
    return { status: 500, body: { error: error.message, code: SIGNATURE_CHECK_UNAVAILABLE } };
  }
}

export function verifyRouter(context: FacilitatorContext): Router {
  const router = Router();
  mount(router, FACILITATOR_OPERATIONS.verify, paymentRequest, async (req, res) => {
    const answer = await answerParsedVerify(context, paymentRequestOf(res));
    // The hot route: res.status().json()'s bytes without Express's send path (runtime/json-answer.ts).
    sendJson(res, answer.status, answer.body);
  });
  return router;
}

/**
 * Mounted at `/settle` (its declared path, app.ts) with its own body parser and error handler (settle's
 * failure shape), so its own route is the router's root.
 */
export function settleRouter(context: FacilitatorContext): Router {
  const router = Router();
  mount(router, { ...FACILITATOR_OPERATIONS.settle, path: "/" }, paymentRequest, async (req, res) => {
    const request = paymentRequestOf(res);
    const payer = request.paymentPayload.payload.claims.user;
    let deployment;
    try {
      deployment = await loadDeployment(context);
    } catch (error) {
      if (!(error instanceof DeploymentUnavailableError)) throw error;
      res
        .status(500)
        .json(settleFailureBody(DEPLOYMENT_UNAVAILABLE, DEPLOYMENT_UNAVAILABLE, error.message, null, payer));
      return;
    }
    deployment = await deploymentForDeadline(context, request, deployment);
    const check = (await context.vaultCheck?.check(deployment)) ?? { ok: true };
    if (!check.ok) {
      context.logger.error(
        { reason: check.reason },
        "settlement refused: Core does not match the Vault on chain",
      );
      res
        .status(500)
        .json(settleFailureBody(VAULT_MISMATCH, VAULT_MISMATCH, check.reason, deployment.network, payer));
      return;
    }
    const { clock, timestampWindow, core, contractWallets } = context;
    const outcome = await settlePayment(request, {
      deployment,
      clock,
      timestampWindow,
      core,
      contractWallets,
    });
    if (outcome.success) {
      context.logger.info(
        { guaranteeId: outcome.guaranteeId, replayed: outcome.replayed },
        "guarantee settled",
      );
    } else {
      const level = outcome.status >= 500 ? "warn" : "debug";
      context.logger[level]({ error: outcome.error, detail: outcome.message }, "settlement refused");
    }
    // The hot route: res.status().json()'s bytes without Express's send path (runtime/json-answer.ts).
    sendJson(res, outcome.success ? 200 : outcome.status, settleOutcomeBody(outcome, deployment.network));
  });
  return router;
}

export function supportedRouter(context: FacilitatorContext): Router {
  const router = Router();
  mount(router, FACILITATOR_OPERATIONS.supported, async (_req, res) => {
    let deployment;
    try {
      deployment = await loadDeployment(context);
    } catch (error) {
      if (!(error instanceof DeploymentUnavailableError)) throw error;
      res
        .status(500)
        .json({ error: `capabilities could not be loaded: ${error.message}`, code: DEPLOYMENT_UNAVAILABLE });
      return;
    }
    res.json(supportedBody(deployment, context.wallet));
  });
  return router;
}

/**
 * Healthy means Core answers now and its public params load (and, with a
 * pinned deployment, describe the same chain and Vault), and, with an RPC URL,
 * the Vault on chain holds Core's BLS key: without them nothing can be settled.
 */
export function healthRouter(context: FacilitatorContext): Router {
  const router = Router();
  mount(router, FACILITATOR_OPERATIONS.health, async (_req, res) => {
    try {
      const current = await context.core.getDeployment({ fresh: true });
      const pinned = context.pinnedDeployment;
      if (
        pinned !== null &&
        (pinned.chainId !== current.chainId || !sameAddress(pinned.vault, current.vault))
      ) {
        throw new Error("Core serves a different chain or Vault than the pinned deployment");
      }
      const check = (await context.vaultCheck?.check(current)) ?? { ok: true };
      if (!check.ok) throw new Error(`${VAULT_MISMATCH}: ${check.reason}`);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      context.logger.warn({ err: error }, "health check failed");
      res.status(503).json({ status: "fail", error: detail });
      return;
    }
    res.json({ status: "ok" });
  });
  return router;
}
