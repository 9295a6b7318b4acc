/**
 * How the console shows times, addresses and transaction hashes: a time once in UTC (chain time, as Core
 * reports it) and, only when the viewer's zone differs, the same instant in local time; addresses and
 * hashes as code that links to the block explorer Core is configured with (`SURETY_EXPLORER_URL`,
 * `GET /console/api/config`), and to the console's own pages where it has one (a payer's collateral).
 */
import { h } from "./dom";
import { shortAddress } from "./format";

let explorerUrl: string | null = null;

/** Set once from `GET /console/api/config` (null: no explorer links). */
export function setExplorer(url: string | null): void {
  explorerUrl = url;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** `2025-06-15 15:06:40` of a date in UTC (`utc`) or in the viewer's zone. */
function stamp(date: Date, utc: boolean): { day: string; clock: string } {
  const [y, m, d, hh, mm, ss] = utc
    ? [
        date.getUTCFullYear(),
        date.getUTCMonth() + 1,
        date.getUTCDate(),
        date.getUTCHours(),
        date.getUTCMinutes(),
        date.getUTCSeconds(),
      ]
    : [
        date.getFullYear(),
        date.getMonth() + 1,
        date.getDate(),
        date.getHours(),
        date.getMinutes(),
        date.getSeconds(),
      ];
  return { day: `${y}-${pad(m)}-${pad(d)}`, clock: `${pad(hh)}:${pad(mm)}:${pad(ss)}` };
}

/**
 * An instant as `2025-06-15 15:06:40 UTC`, then `· 17:06:40 local` (with the date when it differs) only
 * when the viewer's zone is not UTC at that instant: one line, never the same time twice.
 */
export function time(iso: string | null): Node {
  if (iso === null) return h("span", { class: "muted" }, "—");
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return h("span", { class: "time" }, iso);
  const utc = stamp(date, true);
  // Unbreakable pieces: a narrow column breaks between date, time and zone, never inside them.
  const piece = (text: string) => h("span", { class: "part" }, text);
  const parts: Node[] = [h("span", { class: "chain" }, piece(utc.day), " ", piece(`${utc.clock} UTC`))];
  if (date.getTimezoneOffset() !== 0) {
    const local = stamp(date, false);
    parts.push(
      h(
        "span",
        { class: "local" },
        " · ",
        local.day === utc.day ? null : [piece(local.day), " "],
        piece(`${local.clock} local`),
      ),
    );
  }
  return h("span", { class: "time", title: date.toISOString() }, ...parts);
}

function explorerLink(kind: "tx" | "address", value: string): HTMLElement | null {
  if (!explorerUrl) return null;
  return h(
    "a",
    {
      href: `${explorerUrl}/${kind}/${value}`,
      target: "_blank",
      rel: "noopener noreferrer",
      class: "explorer",
      title: `open in the block explorer (${explorerUrl})`,
      "data-testid": `explorer-${kind}`,
    },
    "↗",
  );
}

/** A transaction hash (shortened unless `full`) with its explorer link. */
export function txCode(hash: string, full = false): HTMLElement {
  return h(
    "span",
    { class: "hash" },
    h("code", { title: hash, "data-testid": "tx" }, full ? hash : `${hash.slice(0, 10)}…${hash.slice(-6)}`),
    explorerLink("tx", hash),
  );
}

/**
 * An address (shortened unless `full`) with its explorer link and, with `collateral`, a link to its
 * ledger in the console.
 */
export function addressCode(
  address: string,
  options: { full?: boolean; collateral?: boolean } = {},
): HTMLElement {
  const code = h("code", { title: address }, options.full ? address : shortAddress(address));
  return h(
    "span",
    { class: "hash" },
    options.collateral
      ? h("a", { href: `#/collateral?address=${address}`, "data-testid": "address-link" }, code)
      : code,
    explorerLink("address", address),
  );
}

/** Link to a cycle's own page. */
export function cycleLink(cycleId: number): HTMLElement {
  return h("a", { href: `#/cycle/${cycleId}`, "data-testid": "cycle-link" }, `#${cycleId}`);
}
