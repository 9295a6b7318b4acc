/**
 * A scheme that does nothing, for measuring what the official x402 packages cost by themselves
 * (`bench:paid-request`'s `GET /noop` routes): the buyer's scheme returns a constant payload without
 * signing, the seller's scheme passes the price through, and the facilitator answers at once.
 *
 * - {@link NoopFacilitator}: in the seller's process, no I/O (`GET /noop`): the packages alone.
 * - {@link noopFacilitatorServer}: the same answers over HTTP from a `node:http` server, reached with
 *   the official `HTTPFacilitatorClient` (`GET /noop-http`): the packages plus one facilitator round trip.
 *
 * Both use the `upfront` payment flow, as `svc-credit` does: one settle before the handler, no verify.
 * Benchmark scaffolding only: nothing here checks a payment.
 */
import { createServer, type Server } from "node:http";
import type {
  AssetAmount,
  Network,
  PaymentPayload,
  PaymentPayloadResult,
  PaymentRequirements,
  Price,
  SchemeNetworkClient,
  SchemeNetworkServer,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from "@x402/core/types";
import type { FacilitatorClient } from "@x402/core/server";

export const NOOP_SCHEME = "noop";
export const NOOP_HTTP_SCHEME = "noop-http";
const PAYER = "0x0000000000000000000000000000000000000001";
const UPFRONT = Object.freeze({
  default: Object.freeze({ supported: ["upfront"] as const, default: "upfront" as const }),
});

export class NoopClientScheme implements SchemeNetworkClient {
  constructor(readonly scheme: string) {}
  async createPaymentPayload(): Promise<PaymentPayloadResult> {
    return { x402Version: 2, payload: { nothing: "signed" } };
  }
}

export class NoopServerScheme implements SchemeNetworkServer {
  readonly defaultAssetTransferMethod = "default";
  readonly paymentFlows = UPFRONT;
  constructor(readonly scheme: string) {}
  async parsePrice(price: Price): Promise<AssetAmount> {
    return price as AssetAmount;
  }
  async enhancePaymentRequirements(requirements: PaymentRequirements): Promise<PaymentRequirements> {
    return requirements;
  }
}

function supported(scheme: string, network: Network): SupportedResponse {
  return { kinds: [{ x402Version: 2, scheme, network }], extensions: [], signers: {} };
}

function settled(network: Network): SettleResponse {
  return { success: true, transaction: "", network, payer: PAYER };
}

export class NoopFacilitator implements FacilitatorClient {
  constructor(private readonly network: Network) {}
  async getSupported(): Promise<SupportedResponse> {
    return supported(NOOP_SCHEME, this.network);
  }
  async verify(_p: PaymentPayload, _r: PaymentRequirements): Promise<VerifyResponse> {
    return { isValid: true, payer: PAYER };
  }
  async settle(_p: PaymentPayload, r: PaymentRequirements): Promise<SettleResponse> {
    return settled(r.network);
  }
}

/** `GET /supported`, `POST /verify`, `POST /settle` with constant answers (the body is read, not parsed). */
export function noopFacilitatorServer(network: Network): Server {
  const answers: Record<string, string> = {
    "/supported": JSON.stringify(supported(NOOP_HTTP_SCHEME, network)),
    "/verify": JSON.stringify({ isValid: true, payer: PAYER }),
    "/settle": JSON.stringify(settled(network)),
  };
  return createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const body = answers[new URL(req.url ?? "/", "http://x").pathname];
      res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
      res.end(body ?? "{}");
    });
  });
}
