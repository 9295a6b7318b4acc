/**
 * One JSON request to Core with a deadline. Transport failures (connection
 * refused, timeout, reset) become {@link CoreUnavailableError}; every HTTP
 * answer, whatever its status, is returned for the caller to interpret.
 */
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

export interface CoreResponse {
  status: number;
  /** Parsed JSON body; the raw text when it is not JSON; null when empty. */
  body: unknown;
}

/** Core could not be reached or did not answer in time. */
export class CoreUnavailableError extends Error {
  override readonly name = "CoreUnavailableError";

  /**
   * @param maybeDelivered the request may have reached Core and been acted on (a timeout, a reset
   *   connection), as opposed to never sent (connection refused, unknown host)
   */
  constructor(
    message: string,
    readonly maybeDelivered = false,
  ) {
    super(message);
  }
}

/** Connection failures after which the request cannot have reached the server. */
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Core answered, but not what the interface promises (a bug or a version mismatch on Core's side). */
export class CoreProtocolError extends Error {
  override readonly name = "CoreProtocolError";
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Core answered a request with an error status (for calls other than issuance, which returns outcomes). */
export class CoreHttpError extends Error {
  override readonly name = "CoreHttpError";
  constructor(
    readonly status: number,
    /** Core's machine-readable `code`, when its body has one. */
    readonly code: string | null,
    /** Core's `error` message, or a description of the body. */
    readonly coreMessage: string,
    readonly body: unknown,
  ) {
    super(`Core answered ${status}${code ? ` ${code}` : ""}: ${coreMessage}`);
  }
}

export interface CoreRequest {
  method: "GET" | "POST";
  path: string;
  json?: unknown;
  bearer?: string;
}

export type CoreFetch = (request: CoreRequest) => Promise<CoreResponse>;

/** Longest error text taken over from Core into our answers and logs. */
const MAX_CORE_MESSAGE_CHARS = 500;

/**
 * How long an idle keep-alive connection to Core is kept: below Node's default server `keepAliveTimeout`
 * (5 s), so the facilitator closes an idle connection before Core does and never writes a request into a
 * connection Core is closing.
 */
export const CORE_IDLE_SOCKET_MS = 4_000;

/**
 * A {@link CoreFetch} for `baseUrl` (http or https) with a per-request deadline, over `node:http` with one
 * keep-alive agent per call of this function: ≈ 0.1 ms of CPU per request where the global `fetch` (undici)
 * took ≈ 0.5 ms (docs/benchmarks.md, "A paid request, hop by hop"). Redirects are not followed (an
 * answer 3xx is a transport failure, as `fetch`'s `redirect: "error"` made it).
 */
export function coreFetch(baseUrl: string, timeoutMs: number): CoreFetch {
  const base = new URL(baseUrl);
  const secure = base.protocol === "https:";
  if (!secure && base.protocol !== "http:") throw new Error(`Core URL ${baseUrl} is not http or https`);
  const prefix = base.pathname.replace(/\/+$/, "");
  const agent = new (secure ? HttpsAgent : HttpAgent)({ keepAlive: true, timeout: CORE_IDLE_SOCKET_MS });
  const send = secure ? httpsRequest : httpRequest;
  return ({ method, path, json, bearer }) =>
    new Promise<CoreResponse>((resolve, reject) => {
      const headers: Record<string, string | number> = { accept: "application/json" };
      const body = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
      if (body !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = body.length;
      }
      if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
      let settled = false;
      const fail = (error: CoreUnavailableError) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        request.destroy();
        reject(error);
      };
      // The deadline covers reading the body too.
      const deadline = setTimeout(
        () =>
          fail(
            new CoreUnavailableError(`Core did not answer ${method} ${path} within ${timeoutMs} ms`, true),
          ),
        timeoutMs,
      );
      const request = send(
        {
          protocol: base.protocol,
          hostname: base.hostname,
          port: base.port,
          path: prefix + path,
          method,
          headers,
          agent,
        },
        (response) => {
          const status = response.statusCode ?? 0;
          if (status >= 300 && status < 400) {
            response.resume();
            fail(
              new CoreUnavailableError(`Core request ${method} ${path} failed: redirected (${status})`, true),
            );
            return;
          }
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", (error) =>
            fail(new CoreUnavailableError(`Core request ${method} ${path} failed: ${error.message}`, true)),
          );
          response.on("end", () => {
            if (settled) return;
            settled = true;
            clearTimeout(deadline);
            resolve({ status, body: parseBody(Buffer.concat(chunks).toString("utf8")) });
          });
        },
      );
      request.on("error", (error: NodeJS.ErrnoException) => {
        const notSent = typeof error.code === "string" && NOT_SENT_CODES.has(error.code);
        fail(new CoreUnavailableError(`Core request ${method} ${path} failed: ${error.message}`, !notSent));
      });
      request.end(body);
    });
}

function parseBody(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Core's `{error, code}` error body (docs/protocol.md, "Wire values"), tolerating other shapes. */
export function coreErrorOf(body: unknown): { code: string | null; message: string } {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const { error, code } = body as { error?: unknown; code?: unknown };
    return {
      code: typeof code === "string" && code !== "" ? code.slice(0, MAX_CORE_MESSAGE_CHARS) : null,
      message: typeof error === "string" ? error.slice(0, MAX_CORE_MESSAGE_CHARS) : "no error message",
    };
  }
  if (typeof body === "string" && body !== "") {
    return { code: null, message: body.slice(0, MAX_CORE_MESSAGE_CHARS) };
  }
  return { code: null, message: "empty response body" };
}

/** The HTTP answer as a CoreHttpError. */
export function coreHttpError(response: CoreResponse): CoreHttpError {
  const { code, message } = coreErrorOf(response.body);
  return new CoreHttpError(response.status, code, message, response.body);
}
