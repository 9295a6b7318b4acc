/**
 * The paging rules of `listGuaranteesByRecipient`, shared by every store backend: the page size bounds and
 * the cursor encoding are part of the API (docs/operator-api.md), so both backends must apply the same ones.
 */
import { WireError } from "../../sdk/errors";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./repositories";

// Cursors are opaque to clients. SQLite's carry the insertion sequence number ("g<seq>"); PostgreSQL's the
// inserting transaction's id and the sequence number ("x<xid>.<seq>", see encodeXidCursor).
const CURSOR_PREFIX = "g";
const XID_CURSOR_PREFIX = "x";

/** The page size for `limit` (default when absent), or a 400-mapped {@link WireError} naming `limit`. */
export function pageSize(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new WireError("limit", `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return limit;
}

export function encodeCursor(seq: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${seq}`, "utf8").toString("base64url");
}

/** The sequence number in `cursor`, or a {@link WireError} naming `cursor` if this API did not issue it. */
export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = /^g([1-9][0-9]{0,15})$/.exec(text);
  if (!match || Buffer.from(text, "utf8").toString("base64url") !== cursor) {
    throw new WireError("cursor", "is not a cursor returned by this API");
  }
  return Number(match[1]);
}

/**
 * A cursor at (inserting transaction id, seq): PostgreSQL pages guarantees in that order, so that a row
 * committed late by a transaction that took a lower seq is never skipped (sql/payable-keys.ts).
 */
export function encodeXidCursor(xid: string, seq: number): string {
  if (!/^(0|[1-9][0-9]{0,19})$/.test(xid)) throw new RangeError(`not a transaction id: ${xid}`);
  return Buffer.from(`${XID_CURSOR_PREFIX}${xid}.${seq}`, "utf8").toString("base64url");
}

/** The (xid, seq) in `cursor`, or a {@link WireError} naming `cursor` if this API did not issue it. */
export function decodeXidCursor(cursor: string): { xid: string; seq: number } {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = /^x(0|[1-9][0-9]{0,19})\.([1-9][0-9]{0,15})$/.exec(text);
  if (!match || Buffer.from(text, "utf8").toString("base64url") !== cursor) {
    throw new WireError("cursor", "is not a cursor returned by this API");
  }
  return { xid: match[1], seq: Number(match[2]) };
}
