/**
 * Two servers on one app, for the tests that hold a `node:http` fast path
 * to what Express answers (facilitator `POST /verify`, Core
 * `POST /core/guarantees`): `fast` runs the fast path with Express as its
 * fallback (counting what it hands over), `express` runs Express alone.
 * Requests go over raw sockets, so every byte of the answers can be compared.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";

export interface FastPathPair {
  fast: Server;
  express: Server;
  /** Requests the fast path handed to Express. */
  fallbacks: number;
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
}

/** Starts both servers on free ports; `fastPath(fallback)` builds the fast path's listener. */
export async function startFastPathPair(
  app: RequestListener,
  fastPath: (fallback: RequestListener) => RequestListener,
): Promise<FastPathPair> {
  const pair: FastPathPair = { fast: createServer(), express: createServer(app), fallbacks: 0 };
  pair.fast = createServer(
    fastPath((req, res) => {
      pair.fallbacks++;
      app(req, res);
    }),
  );
  await Promise.all([listen(pair.fast), listen(pair.express)]);
  return pair;
}

export async function stopFastPathPair(pair: FastPathPair | undefined): Promise<void> {
  if (pair === undefined) return;
  await Promise.all(
    [pair.fast, pair.express].map(
      (server) =>
        new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())),
    ),
  );
}

/**
 * One raw request (head and body, `Connection: close`) on its own connection; the raw response with
 * the `Date` header removed.
 */
export async function exchange(server: Server, raw: Buffer): Promise<string> {
  const { port } = server.address() as AddressInfo;
  const socket = connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    socket.on("end", resolve);
    socket.on("error", reject);
  });
  // Not end(): a half-closed connection may be dropped before a slow answer; `Connection: close` ends it.
  socket.write(raw);
  await ended;
  socket.destroy();
  return Buffer.concat(chunks)
    .toString("latin1")
    .replace(/^Date: [^\r]*\r\n/im, "");
}

export function statusOf(response: string): number {
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(response)![1]);
}

/** The response's body parsed as JSON (the body bytes are UTF-8). */
export function jsonOf(response: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(response.slice(response.indexOf("\r\n\r\n") + 4), "latin1").toString("utf8"));
}
