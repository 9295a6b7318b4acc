/**
 * A buyer as the official packages build one: the 402 read by
 * `x402HTTPClient`, the payment made by `x402Client` with the svc-credit
 * `SuretyClientScheme`, the header encoded by `x402HTTPClient`. For tests
 * that need the payment header itself (replays, tampering) rather than a
 * paying fetch.
 */
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type { Network } from "@x402/core/types";
import type { SignedGuarantee } from "../../sdk/claims";
import { decodePaymentHeader } from "../../sdk/x402";
import { SuretyClientScheme, type SuretyClientSchemeOptions } from "../../sdk/kits/x402-scheme";

export interface OfficialPayment {
  x402Version: 1 | 2;
  /** `X-PAYMENT` (v1) or `PAYMENT-SIGNATURE` (v2) and its value. */
  header: { name: string; value: string };
  signed: SignedGuarantee;
}

/** Both x402 versions registered for the scheme's network, the scheme's limits as spend controls. */
export function officialClient(scheme: SuretyClientScheme): x402Client {
  const network = scheme.network as Network;
  return x402Client.fromConfig({
    schemes: [
      { network, client: scheme },
      { network, client: scheme, x402Version: 1 },
    ],
    spendControls: scheme.spendControls(),
  });
}

/** Pays a seller's 402 answer (`response` not yet read) as @x402/fetch would, without sending it. */
export async function officialPayment(
  response: Response,
  options: SuretyClientSchemeOptions,
): Promise<OfficialPayment> {
  const client = officialClient(new SuretyClientScheme(options));
  const http = new x402HTTPClient(client);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const required = http.getPaymentRequiredResponse((name) => response.headers.get(name), body);
  const payload = await client.createPaymentPayload(required);
  const [[name, value]] = Object.entries(http.encodePaymentSignatureHeader(payload));
  return {
    x402Version: payload.x402Version as 1 | 2,
    header: { name, value },
    signed: decodePaymentHeader(value).payload,
  };
}
