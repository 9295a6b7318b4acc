/**
 * Whether addresses have contract code, as both services ask before an ERC-1271 check: "has code" is kept
 * for good (code does not go away since EIP-6780, except in its creation transaction), "no code" only for
 * `noCodeTtlSeconds` (a counterfactual wallet may be deployed later; the TTL bounds how long it is refused).
 * At most `maxEntries` addresses are remembered; the "no code" entries go first.
 */
import type { Clock } from "./clock";

/** Default seconds an address seen without code is not asked again. */
export const NO_CODE_TTL_SECONDS = 60;
/** Addresses remembered at most by default. */
export const MAX_CACHED_ADDRESSES = 10_000;

export class CodePresenceCache {
  /** lower-case address → true (has code), or the clock second until which "no code" holds. */
  private readonly entries = new Map<string, true | number>();

  constructor(
    private readonly clock: Clock,
    private readonly noCodeTtlSeconds = NO_CODE_TTL_SECONDS,
    private readonly maxEntries = MAX_CACHED_ADDRESSES,
  ) {}

  /** Whether `address` has code: from the cache, else by `read` (whose errors propagate, nothing cached). */
  async isContract(address: string, read: () => Promise<boolean>): Promise<boolean> {
    const key = address.toLowerCase();
    const cached = this.entries.get(key);
    const now = this.clock.nowSeconds();
    if (cached === true) return true;
    if (cached !== undefined && now < cached) return false;
    const has = await read();
    if (this.entries.size >= this.maxEntries) this.evict(now);
    this.entries.set(key, has ? true : now + this.noCodeTtlSeconds);
    return has;
  }

  /** Drops expired "no code" entries, or all of them if none expired (contracts stay cached). */
  private evict(now: number): void {
    let dropped = 0;
    for (const [key, value] of this.entries) {
      if (value !== true && value <= now) {
        this.entries.delete(key);
        dropped++;
      }
    }
    if (dropped > 0) return;
    for (const [key, value] of this.entries) if (value !== true) this.entries.delete(key);
  }
}
