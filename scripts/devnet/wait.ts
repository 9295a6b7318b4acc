/** Polling helpers for service readiness: RPC answers, HTTP 200s. */

export class WaitError extends Error {
  override readonly name = "WaitError";
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** What we wait for, for the timeout message. */
  what: string;
  /** Checked before every attempt: a string aborts the wait with that reason (e.g. the process died). */
  abort?: () => string | null;
}

/** Calls `check` until it returns a value other than undefined; throws a WaitError on timeout or abort. */
export async function waitFor<T>(check: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError = "";
  for (;;) {
    const reason = options.abort?.();
    if (reason) throw new WaitError(`${options.what}: ${reason}`);
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = (error as Error).message;
    }
    if (Date.now() >= deadline) {
      throw new WaitError(
        `${options.what}: not ready after ${options.timeoutMs / 1000} s${lastError ? ` (last error: ${lastError})` : ""}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}

/** The chain id a JSON-RPC node reports (`eth_chainId`); throws when it does not answer. */
export async function rpcChainId(rpcUrl: string, timeoutMs = 2_000): Promise<number> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json()) as { result?: string };
  if (typeof body.result !== "string")
    throw new Error(`eth_chainId: unexpected answer ${JSON.stringify(body)}`);
  return Number(BigInt(body.result));
}

/** Status and body of a GET (body parsed as JSON when it is JSON). */
export async function getJson(url: string, timeoutMs = 2_000): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}
