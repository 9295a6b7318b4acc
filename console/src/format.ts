/** Display of amounts, addresses and durations: token decimals and symbols (times: links.ts). */
import type { WireTokenList } from "./api";

export const ETH = "0x0000000000000000000000000000000000000000";

export interface AssetInfo {
  symbol: string;
  decimals: number;
}

/** Symbol and decimals per lower-case address: ETH (always supported, not listed) and the deployment's tokens. */
export function assetTable(tokens: WireTokenList | null): Map<string, AssetInfo> {
  const table = new Map<string, AssetInfo>([[ETH, { symbol: "ETH", decimals: 18 }]]);
  for (const token of tokens?.tokens ?? []) {
    table.set(token.address.toLowerCase(), { symbol: token.symbol, decimals: token.decimals });
  }
  return table;
}

/** `1500000` with 6 decimals → `1.5`; exact (bigint), trailing zeros dropped, thousands grouped. */
export function formatUnits(amount: string, decimals: number): string {
  let value: bigint;
  try {
    value = BigInt(amount);
  } catch {
    return amount;
  }
  const negative = value < 0n;
  if (negative) value = -value;
  const base = 10n ** BigInt(decimals);
  const whole = (value / base).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const fraction = decimals === 0 ? "" : (value % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** An amount with its symbol; an asset Core does not list shows base units and its address. */
export function formatAmount(amount: string, asset: string, assets: Map<string, AssetInfo>): string {
  const info = assets.get(asset.toLowerCase());
  if (!info) return `${amount} base units of ${shortAddress(asset)}`;
  return `${formatUnits(amount, info.decimals)} ${info.symbol}`;
}

export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

/** A duration in seconds as `1 h 2 min 5 s`. */
export function formatSeconds(total: number): string {
  const parts: string[] = [];
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (s || parts.length === 0) parts.push(`${s} s`);
  return parts.join(" ");
}
