/**
 * `sendJson(res, status, body)`: the answer `res.status(status).json(body)` gives, byte for byte, as
 * Core and the facilitator configure Express (no `json spaces`, `json replacer` or `json escape`, ETag
 * off), written without Express's `res.json` → `res.send` path (charset and content-type parsing,
 * ETag and freshness checks): ≈ 11 µs of CPU less per answer on the benchmark VM (docs/benchmarks.md,
 * "Fifth round"). Used by the hot routes only (`POST /core/guarantees`, `POST /verify`, `POST /settle`); every other
 * route answers with `res.json`. test/runtime/json-answer.test.ts compares the bytes of both.
 */
import type { ServerResponse } from "node:http";

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", JSON_CONTENT_TYPE);
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}
