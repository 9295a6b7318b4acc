/**
 * The seller's side of x402, pure parts: route configuration (validated
 * once, at startup), the requirements a route publishes in each x402
 * version, the 402 answer, and the check that a facilitator's certificate
 * binds the payment that was presented.
 *
 * Shapes follow the reference x402 packages: v1 requirements carry
 * `maxAmountRequired`, `resource`, `description`, `mimeType`,
 * `maxTimeoutSeconds`; v2 requirements carry `amount`, `maxTimeoutSeconds`
 * and an `extra` object, and the v2 402 answer names the `resource`.
 */
import { type WireValidationPolicy, parseValidationPolicy } from "../../claims";
import { type Certificate, decodeCertificateClaims } from "../../certificate";
import type { GuaranteeClaims, ValidationPolicy } from "../../claims";
import { WireError } from "../../errors";
import {
  formatUint,
  parseAddress,
  parseNetwork,
  parseObject,
  parseSafeInteger,
  parseUint256,
} from "../../wire";
import {
  POLICY_EXTRA_FIELDS,
  type PaymentRequirements,
  SCHEME,
  type X402Version,
  extraFromPolicy,
  parsePaymentRequirements,
} from "../../x402";

/** How long a buyer has to pay, unless the route says otherwise. */
export const DEFAULT_MAX_TIMEOUT_SECONDS = 60;
export const DEFAULT_MIME_TYPE = "application/json";

/** One protected route, as the seller configures it. */
export interface PaywallRoute {
  /** Price in base units of `asset` (decimal string, bigint or safe integer). */
  price: string | bigint | number;
  /** Token address, or the zero address for ETH. */
  asset: string;
  description?: string;
  mimeType?: string;
  maxTimeoutSeconds?: number;
  /**
   * Demand a V2 guarantee under this validation policy (same snake_case
   * fields as `claims.validation_policy`); it is published flat in `extra`.
   */
  validationPolicy?: WireValidationPolicy;
  /** More `extra` fields (flat policy fields are also accepted here). */
  extra?: Record<string, unknown>;
  /** v1 `resource` / v2 `resource.url`; default: the URL of the request. */
  resource?: string;
  /** Recipient for this route; default: the paywall's `payTo`. */
  payTo?: string;
}

/** A route after validation: every field in wire form. */
export interface CompiledRoute {
  key: string;
  method: string;
  path: string;
  amount: string;
  asset: string;
  payTo: string;
  network: string;
  description: string;
  mimeType: string;
  maxTimeoutSeconds: number;
  /** Always an object (`{}` when empty): the reference v2 schema wants one. */
  extra: Record<string, unknown>;
  resource?: string;
}

const ROUTE_KEY = /^([A-Z]+) (\/\S*)$/;

/** `"GET /weather"` → method and path; errors name `routes["<key>"]`. */
export function parseRouteKey(key: string): { method: string; path: string } {
  const match = ROUTE_KEY.exec(key);
  if (match === null) {
    throw new WireError(`routes["${key}"]`, 'must be "<METHOD> <path>", e.g. "GET /weather"');
  }
  return { method: match[1], path: match[2] };
}

function routeExtra(route: PaywallRoute, field: string): Record<string, unknown> {
  const base = route.extra === undefined ? {} : { ...parseObject(route.extra, `${field}.extra`) };
  if (route.validationPolicy === undefined) return base;
  if (POLICY_EXTRA_FIELDS.some((name) => base[name] !== undefined)) {
    throw new WireError(
      `${field}.validationPolicy`,
      "conflicts with policy fields in extra; give one of them",
    );
  }
  const policy = parseValidationPolicy(route.validationPolicy, `${field}.validationPolicy`);
  return extraFromPolicy(policy, base);
}

/** Validates one route; `defaults` are the paywall-wide payTo and network. */
export function compileRoute(
  key: string,
  route: PaywallRoute,
  defaults: { payTo: string; network: string },
): CompiledRoute {
  const field = `routes["${key}"]`;
  const { method, path } = parseRouteKey(key);
  parseObject(route, field);
  const price = typeof route.price === "string" ? route.price : String(route.price);
  const compiled: CompiledRoute = {
    key,
    method,
    path,
    amount: formatUint(parseUint256(price, `${field}.price`)),
    asset: parseAddress(route.asset, `${field}.asset`),
    payTo: parseAddress(
      route.payTo ?? defaults.payTo,
      route.payTo === undefined ? "payTo" : `${field}.payTo`,
    ),
    network: defaults.network,
    description: route.description ?? "",
    mimeType: route.mimeType ?? DEFAULT_MIME_TYPE,
    maxTimeoutSeconds: DEFAULT_MAX_TIMEOUT_SECONDS,
    extra: routeExtra(route, field),
  };
  if (route.maxTimeoutSeconds !== undefined) {
    compiled.maxTimeoutSeconds = parseSafeInteger(route.maxTimeoutSeconds, `${field}.maxTimeoutSeconds`);
    if (compiled.maxTimeoutSeconds === 0) {
      throw new WireError(`${field}.maxTimeoutSeconds`, "must be greater than zero");
    }
  }
  if (route.resource !== undefined) compiled.resource = route.resource;
  // The published requirements must pass the same parser buyers and the facilitator use.
  parsePaymentRequirements(
    requirementsJson(compiled, 1, compiled.resource ?? "https://example.invalid/"),
    field,
  );
  parsePaymentRequirements(
    requirementsJson(compiled, 2, compiled.resource ?? "https://example.invalid/"),
    field,
  );
  return compiled;
}

/** Validates the paywall-wide settings and every route. */
export function compileRoutes(
  routes: Record<string, PaywallRoute>,
  defaults: { payTo: string; network: string },
): CompiledRoute[] {
  parseNetwork(defaults.network, "network");
  parseAddress(defaults.payTo, "payTo");
  parseObject(routes, "routes");
  const compiled = Object.entries(routes).map(([key, route]) => compileRoute(key, route, defaults));
  if (compiled.length === 0) throw new WireError("routes", "must protect at least one route");
  return compiled;
}

/** The requirements a route publishes, as JSON, for `x402Version`; `resource` is the resource URL. */
export function requirementsJson(
  route: CompiledRoute,
  x402Version: X402Version,
  resource: string,
): Record<string, unknown> {
  const common = {
    scheme: SCHEME,
    network: route.network,
    payTo: route.payTo,
    asset: route.asset,
    maxTimeoutSeconds: route.maxTimeoutSeconds,
    extra: route.extra,
  };
  if (x402Version === 2) return { ...common, amount: route.amount };
  return {
    ...common,
    maxAmountRequired: route.amount,
    resource,
    description: route.description,
    mimeType: route.mimeType,
  };
}

/** The parsed requirements a payment for `route` is checked against. */
export function routeRequirements(
  route: CompiledRoute,
  x402Version: X402Version,
  resource: string,
): PaymentRequirements {
  return parsePaymentRequirements(requirementsJson(route, x402Version, resource));
}

/**
 * The 402 answer: v1 `{x402Version: 1, error?, accepts}` (sent as the body);
 * v2 `{x402Version: 2, error?, resource, accepts}` (sent in the
 * `PAYMENT-REQUIRED` header, and as the body for people reading it).
 */
export function paymentRequiredJson(
  route: CompiledRoute,
  x402Version: X402Version,
  resource: string,
  error?: string,
): Record<string, unknown> {
  const accepts = [requirementsJson(route, x402Version, resource)];
  const answer: Record<string, unknown> = { x402Version };
  if (error !== undefined) answer.error = error;
  if (x402Version === 2) {
    answer.resource = { url: resource, description: route.description, mimeType: route.mimeType };
  }
  answer.accepts = accepts;
  return answer;
}

/**
 * Why a certificate from the facilitator does not bind `claims`, or null.
 * The seller does not know Core's key or Vault, so it cannot redo the
 * facilitator's BLS check; it does make sure the certificate is for this
 * very payment (payer, recipient, request, amount, asset, time, policy),
 * not for some other guarantee. Returns the guarantee id when it matches.
 */
export function certificateBindsClaims(
  certificate: Certificate,
  claims: GuaranteeClaims,
): { ok: true; guaranteeId: string } | { ok: false; problem: string } {
  let decoded;
  try {
    decoded = decodeCertificateClaims(certificate.claims);
  } catch (error) {
    if (error instanceof WireError) return { ok: false, problem: error.message };
    throw error;
  }
  const got = decoded.claims;
  const same =
    got.version === claims.version &&
    got.user.toLowerCase() === claims.user.toLowerCase() &&
    got.recipient.toLowerCase() === claims.recipient.toLowerCase() &&
    got.reqId === claims.reqId &&
    got.amount === claims.amount &&
    got.asset.toLowerCase() === claims.asset.toLowerCase() &&
    got.timestamp === claims.timestamp &&
    (got.version === 1 || claims.version === 1 || samePolicy(got.policy, claims.policy));
  return same
    ? { ok: true, guaranteeId: decoded.guaranteeId }
    : { ok: false, problem: "the certificate does not bind the presented payment" };
}

/** Signed policy fields equal (the unsigned integrity fields are not in certificates). */
function samePolicy(a: ValidationPolicy, b: ValidationPolicy): boolean {
  return (
    a.registry.toLowerCase() === b.registry.toLowerCase() &&
    a.validator.toLowerCase() === b.validator.toLowerCase() &&
    a.agentId === b.agentId &&
    a.minScore === b.minScore &&
    a.jobHash.toLowerCase() === b.jobHash.toLowerCase() &&
    a.tag === b.tag &&
    a.deadline === b.deadline
  );
}
