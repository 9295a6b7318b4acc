/**
 * Payer signatures of contract wallets (ERC-1271) at issuance, checked as `Vault.remunerate` and
 * `answerChallenge` will check them (contracts/lib/GuaranteeSignature.sol): only when the 65-byte ECDSA
 * recovery does not give the payer, and only if the payer address has code, then by the wallet's own
 * `isValidSignature(hash, signature)` on chain.
 *
 * Only failed EOA recoveries reach this: the EOA hot path does not change. Code presence is cached per
 * address: "has code" for good (code does not go away since EIP-6780, except in its creation transaction),
 * "no code" for `noCodeTtlSeconds` only (a counterfactual wallet may be deployed later; the TTL bounds the
 * `eth_getCode` calls bad signatures can cause). The wallet's answer itself is never cached: a wallet may
 * change its owners.
 */
import type { ChainGateway } from "../chain/gateway";
import type { Clock } from "../clock";

/** Default seconds an address seen without code is not asked again. */
export const NO_CODE_TTL_SECONDS = 60;
/** Addresses remembered at most (the oldest "no code" entries go first). */
const MAX_CACHED_ADDRESSES = 10_000;

export class ContractSignatureChecker {
  /** lower-case address → true (has code), or the wall-clock second until which "no code" holds. */
  private readonly code = new Map<string, true | number>();

  constructor(
    private readonly chain: Required<Pick<ChainGateway, "hasCode" | "isValidErc1271Signature">>,
    private readonly clock: Clock,
    private readonly noCodeTtlSeconds = NO_CODE_TTL_SECONDS,
  ) {}

  /** A checker over `chain`, or null when the gateway cannot read code (EOA signatures only). */
  static over(chain: ChainGateway, clock: Clock): ContractSignatureChecker | null {
    const { hasCode, isValidErc1271Signature } = chain;
    if (hasCode === undefined || isValidErc1271Signature === undefined) return null;
    return new ContractSignatureChecker(
      { hasCode: hasCode.bind(chain), isValidErc1271Signature: isValidErc1271Signature.bind(chain) },
      clock,
    );
  }

  /**
   * Whether `payer` is a contract that accepts `signature` over `hash` (the scheme's signed hash). False
   * for an address without code. Throws the gateway's ChainError when the chain cannot be asked.
   */
  async isValid(payer: string, hash: string, signature: string): Promise<boolean> {
    if (!(await this.isContract(payer))) return false;
    return this.chain.isValidErc1271Signature(payer, hash, signature);
  }

  private async isContract(address: string): Promise<boolean> {
    const key = address.toLowerCase();
    const cached = this.code.get(key);
    const now = this.clock.nowSeconds();
    if (cached === true) return true;
    if (cached !== undefined && now < cached) return false;
    const has = await this.chain.hasCode(address);
    if (this.code.size >= MAX_CACHED_ADDRESSES) this.evict(now);
    this.code.set(key, has ? true : now + this.noCodeTtlSeconds);
    return has;
  }

  /** Drops expired "no code" entries, or all of them if none expired (contracts stay cached). */
  private evict(now: number): void {
    let dropped = 0;
    for (const [key, value] of this.code) {
      if (value !== true && value <= now) {
        this.code.delete(key);
        dropped++;
      }
    }
    if (dropped > 0) return;
    for (const [key, value] of this.code) if (value !== true) this.code.delete(key);
  }
}
