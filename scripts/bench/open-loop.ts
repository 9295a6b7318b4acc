/**
 * An open-loop HTTP load generator: a fixed arrival rate of POST requests,
 * whatever happened to earlier ones. Request i is due at start + i / rate and
 * goes out on the first free one of `connections` keep-alive sockets (a
 * request due while all are busy waits for one); its latency runs from when
 * it was due to the last byte of its answer, so queueing in the client counts
 * too (no coordinated omission).
 *
 * Why not autocannon's `overallRate`: it gives each connection a quota of
 * `rate / connections` requests per second, sent back to back at the top of
 * every second, so "half rate" is full concurrency for half of each second.
 *
 * Why raw sockets and not `http.request`: this process shares the machine
 * with the server it measures, and its own garbage-collection pauses count
 * against the server (a response that arrives during a pause is timed when the
 * pause ends). Requests are built as bytes before the clock starts, and an
 * answer is read by its status line and `Content-Length` only, so the client
 * allocates little per request. It reports how late it sent requests and its
 * own event-loop delay, so that what remains of its stalls can be seen.
 *
 * Answers must carry `Content-Length` (no chunked bodies), which every JSON
 * answer of Core and the facilitator does.
 */
import { connect, type Socket } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { percentile } from "./stats";

export interface OpenLoopOptions {
  /** Base URL of the server, e.g. `http://127.0.0.1:8080`. */
  url: string;
  path: string;
  /** Extra request headers (e.g. Authorization); Content-Type is JSON. */
  headers: Readonly<Record<string, string>>;
  /** The request bodies, one per request, in order (cycled if fewer than rate × duration). */
  bodies: readonly string[];
  connections: number;
  /** Seconds. */
  duration: number;
  /** Requests per second. */
  rate: number;
}

/** What every load phase of the benches reports. */
export interface LoadFigures {
  requests: number;
  non2xx: number;
  errors: number;
  /** 2xx answers per second of wall time. */
  perSecond: number;
  /** Latency of 2xx answers (here from their due time), ms. */
  p50: number;
  p99: number;
}

export interface OpenLoopResult extends LoadFigures {
  /** How late requests were sent after their due time (the generator's own stalls and busy sockets), p99, ms. */
  sendLateP99: number;
  /** The generator's event-loop delay, max, ms. */
  loopDelayMax: number;
}

/** How often the generator wakes to send the requests that are due. */
const TICK_MS = 1;
const LOOP_DELAY_RESOLUTION_MS = 1;
const HEADER_END = Buffer.from("\r\n\r\n");
const CONTENT_LENGTH = /\r\ncontent-length: *([0-9]+)/i;

function requestBytes(options: OpenLoopOptions, host: string, body: string): Buffer {
  const payload = Buffer.from(body, "utf8");
  const lines = [
    `POST ${options.path} HTTP/1.1`,
    `Host: ${host}`,
    "Connection: keep-alive",
    "Content-Type: application/json",
    ...Object.entries(options.headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${payload.length}`,
  ];
  return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1"), payload]);
}

/** One keep-alive connection with at most one request in flight. */
interface Connection {
  socket: Socket;
  /** Due time of the request in flight, or null when the connection is free. */
  due: number | null;
  /** Bytes of the answer received so far. */
  pending: Buffer;
}

async function openConnections(host: string, port: number, count: number): Promise<Connection[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Connection>((resolve, reject) => {
          const socket = connect({ host, port, noDelay: true }, () => {
            socket.off("error", reject);
            resolve({ socket, due: null, pending: Buffer.alloc(0) });
          });
          socket.once("error", reject);
        }),
    ),
  );
}

/** Runs the load; resolves when every request has been answered or has failed. */
export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(options.url);
  const port = Number(target.port);
  const total = Math.floor(options.rate * options.duration);
  const requests = Array.from({ length: total }, (_, i) =>
    requestBytes(options, target.host, options.bodies[i % options.bodies.length]),
  );
  const connections = await openConnections(target.hostname, port, options.connections);
  const free: Connection[] = [...connections];
  const latencies: number[] = [];
  const lateness: number[] = [];
  let sent = 0;
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let done = 0;
  let live = connections.length;
  const loop = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loop.enable();
  const start = performance.now();
  const dueAt = (i: number) => start + (i * 1000) / options.rate;

  await new Promise<void>((finish) => {
    const settle = () => {
      if (++done === total) finish();
    };
    const sendDue = () => {
      const now = performance.now();
      while (sent < total && free.length > 0 && dueAt(sent) <= now) {
        const connection = free.pop()!;
        connection.due = dueAt(sent);
        lateness.push(now - connection.due);
        connection.socket.write(requests[sent]);
        sent++;
      }
    };
    const answered = (connection: Connection, status: number) => {
      if (status >= 200 && status < 300) {
        ok++;
        latencies.push(performance.now() - connection.due!);
      } else non2xx++;
      connection.due = null;
      free.push(connection);
      settle();
      sendDue();
    };
    for (const connection of connections) {
      connection.socket.on("data", (chunk: Buffer) => {
        connection.pending =
          connection.pending.length === 0 ? chunk : Buffer.concat([connection.pending, chunk]);
        const headerEnd = connection.pending.indexOf(HEADER_END);
        if (headerEnd < 0) return;
        const head = connection.pending.toString("latin1", 0, headerEnd);
        const length = Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0);
        const end = headerEnd + HEADER_END.length + length;
        if (connection.pending.length < end) return;
        connection.pending = connection.pending.subarray(end);
        answered(connection, Number(head.slice(9, 12)));
      });
      connection.socket.on("error", () => connection.socket.destroy());
      connection.socket.on("close", () => {
        // A broken connection fails its request in flight and is not used again.
        live--;
        const index = free.indexOf(connection);
        if (index >= 0) free.splice(index, 1);
        if (connection.due !== null) {
          errors++;
          connection.due = null;
          settle();
        }
        if (live === 0) {
          // Nothing left to send on: the requests not yet sent fail too.
          for (; sent < total; sent++) {
            errors++;
            settle();
          }
        }
      });
    }
    const tick = () => {
      sendDue();
      if (sent < total) setTimeout(tick, TICK_MS);
    };
    tick();
  });

  const elapsedS = (performance.now() - start) / 1000;
  loop.disable();
  for (const { socket } of connections) {
    socket.removeAllListeners("close");
    socket.destroy();
  }
  latencies.sort((a, b) => a - b);
  lateness.sort((a, b) => a - b);
  return {
    requests: total,
    non2xx,
    errors,
    perSecond: ok / elapsedS,
    p50: Math.round(percentile(latencies, 50) * 10) / 10,
    p99: Math.round(percentile(latencies, 99) * 10) / 10,
    sendLateP99: percentile(lateness, 99),
    loopDelayMax: loop.max / 1e6,
  };
}
