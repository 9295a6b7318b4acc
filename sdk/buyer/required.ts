/**
 * Reading a 402 answer. x402 v2 sends the requirements in the
 * `PAYMENT-REQUIRED` header (base64 JSON); v1 sends them as the JSON body.
 * When both are present the header wins, as in the reference client.
 */
import { WireError } from "../errors";
import {
  type PaymentRequired,
  SCHEME,
  type X402Version,
  decodeBase64Json,
  parsePaymentRequired,
} from "../x402";
import { PaymentError } from "./errors";

export interface PaymentRequiredAnswer {
  x402Version: X402Version;
  /** Parsed answer; `accepts` holds the `svc-credit` options only. */
  required: PaymentRequired;
  /**
   * The same `svc-credit` options exactly as the seller sent them (same order
   * as `required.accepts`). A v2 payment echoes the chosen one verbatim in
   * `accepted`, so a seller comparing it with its own requirements finds them equal.
   */
  rawAccepts: Record<string, unknown>[];
}

function fromJson(json: unknown, field: string): PaymentRequiredAnswer {
  const required = parsePaymentRequired(json, field);
  const options = (json as { accepts: unknown[] }).accepts;
  const rawAccepts = options.filter(
    (option): option is Record<string, unknown> => (option as { scheme?: unknown }).scheme === SCHEME,
  );
  return { x402Version: required.x402Version, required, rawAccepts };
}

/**
 * The payment requirements of a 402 answer, from the `PAYMENT-REQUIRED`
 * header value (or null) and the body parsed as JSON (or undefined when it
 * is not JSON). Throws {@link PaymentError} `invalid_payment_required`
 * naming the field when neither carries valid `svc-credit` requirements.
 */
export function readPaymentRequired(header: string | null | undefined, body: unknown): PaymentRequiredAnswer {
  try {
    if (header !== null && header !== undefined && header !== "") {
      return fromJson(decodeBase64Json(header, "PAYMENT-REQUIRED"), "PAYMENT-REQUIRED");
    }
    if (body === undefined) {
      throw new WireError("body", "is not JSON and there is no PAYMENT-REQUIRED header");
    }
    return fromJson(body, "body");
  } catch (error) {
    if (error instanceof WireError) {
      throw new PaymentError("invalid_payment_required", `the 402 answer is not usable: ${error.message}`);
    }
    throw error;
  }
}
