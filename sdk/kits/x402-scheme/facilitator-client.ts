/**
 * `SuretyFacilitatorClient`: `@x402/core`'s `HTTPFacilitatorClient` whose `/verify` and `/settle` requests go
 * over `node:http` (or `node:https`) through one keep-alive agent instead of the global `fetch` (undici's
 * request machinery): less CPU per paid request on the seller (docs/benchmarks.md, "A paid request, hop by
 * hop", third round). Everything else is the official client's own code: it builds the request, reads the
 * answer, raises its errors (`VerifyError`, `SettleError`, `FacilitatorResponseError`,
 * `FacilitatorTimeoutError`, the classes the official server checks for) and attaches `EXTENSION-RESPONSES`;
 * only the `fetch` it calls is this file's, handed to it for the synchronous start of each call (the
 * official client calls `fetch` before its first `await` unless `createAuthHeaders` is configured, and then
 * it simply uses the global `fetch`). Differences: a 3xx answer is returned as it is (a failed call; Surety's
 * facilitator never redirects) instead of followed. `getSupported` (once at start-up) is unchanged.
 * Node only: its own entry point (`@surety/x402/facilitator-client`), not re-exported from the scheme's.
 */
import { Agent as HttpAgent, type IncomingHttpHeaders, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { type FacilitatorConfig, HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";

/** Idle keep-alive sockets close after this long: below Node's default server `keepAliveTimeout` (5 s). */
export const FACILITATOR_IDLE_SOCKET_MS = 4_000;

export class SuretyFacilitatorClient extends HTTPFacilitatorClient {
  readonly #fetch: typeof fetch;

  constructor(config?: FacilitatorConfig) {
    super(config);
    const secure = new URL(this.url).protocol === "https:";
    const agent = new (secure ? HttpsAgent : HttpAgent)({
      keepAlive: true,
      timeout: FACILITATOR_IDLE_SOCKET_MS,
    });
    this.#fetch = nodeHttpFetch(agent, secure ? httpsRequest : httpRequest);
  }

  override verify(
    paymentPayload: PaymentPayload,
    paymentRequirements: PaymentRequirements,
  ): Promise<VerifyResponse> {
    return this.#withNodeFetch(() => super.verify(paymentPayload, paymentRequirements));
  }

  override settle(
    paymentPayload: PaymentPayload,
    paymentRequirements: PaymentRequirements,
  ): Promise<SettleResponse> {
    return this.#withNodeFetch(() => super.settle(paymentPayload, paymentRequirements));
  }

  /** Runs `call` with this client's `fetch` as the global one until `call` returns its promise. */
  #withNodeFetch<T>(call: () => Promise<T>): Promise<T> {
    const global = globalThis.fetch;
    globalThis.fetch = this.#fetch;
    try {
      return call();
    } finally {
      globalThis.fetch = global;
    }
  }
}

/**
 * The subset of `fetch` the official client uses (`method`, string `body`, a headers record, `signal`), over
 * `agent`: the answer's body is read whole before the `Response` is made; an abort (the client's deadline)
 * destroys the request and rejects with the signal's reason, as `fetch` does; a transport failure rejects
 * with `TypeError("fetch failed")` and the cause.
 */
function nodeHttpFetch(agent: HttpAgent, send: typeof httpRequest): typeof fetch {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init?.signal ?? null;
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const url = new URL(input instanceof Request ? input.url : String(input));
      const body = init?.body === undefined || init.body === null ? undefined : String(init.body);
      const headers: Record<string, string | number> = headerRecord(init?.headers);
      if (body !== undefined) headers["content-length"] = Buffer.byteLength(body);
      let done = false;
      const finish = (error: unknown, response?: Response) => {
        if (done) return;
        done = true;
        signal?.removeEventListener("abort", onAbort);
        if (error !== null) {
          request.destroy();
          reject(error);
        } else resolve(response!);
      };
      const onAbort = () => finish(signal!.reason);
      const request = send(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: init?.method ?? "GET",
          headers,
          agent,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => chunks.push(chunk));
          answer.on("error", (error) => finish(new TypeError("fetch failed", { cause: error })));
          answer.on("end", () => {
            const status = answer.statusCode ?? 0;
            const empty = status === 204 || status === 205 || status === 304;
            try {
              finish(
                null,
                new Response(empty ? null : Buffer.concat(chunks), {
                  status,
                  statusText: answer.statusMessage,
                  headers: responseHeaders(answer.headers),
                }),
              );
            } catch (error) {
              finish(new TypeError("fetch failed", { cause: error }));
            }
          });
        },
      );
      signal?.addEventListener("abort", onAbort, { once: true });
      request.on("error", (error) => finish(new TypeError("fetch failed", { cause: error })));
      request.end(body);
    });
}

function headerRecord(headers: NonNullable<Parameters<typeof fetch>[1]>["headers"]): Record<string, string> {
  if (headers === undefined) return {};
  if (headers instanceof Headers || Array.isArray(headers)) return Object.fromEntries(headers);
  return { ...(headers as Record<string, string>) };
}

function responseHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) out.append(name, one);
  }
  return out;
}
