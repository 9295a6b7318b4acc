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
import { CodePresenceCache, NO_CODE_TTL_SECONDS } from "../../runtime/code-presence";

export { NO_CODE_TTL_SECONDS } from "../../runtime/code-presence";

export class ContractSignatureChecker {
  private readonly code: CodePresenceCache;

  constructor(
    private readonly chain: Required<Pick<ChainGateway, "hasCode" | "isValidErc1271Signature">>,
    clock: Clock,
    noCodeTtlSeconds = NO_CODE_TTL_SECONDS,
  ) {
    this.code = new CodePresenceCache(clock, noCodeTtlSeconds);
  }

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
    if (!(await this.code.isContract(payer, () => this.chain.hasCode(payer)))) return false;
    return this.chain.isValidErc1271Signature(payer, hash, signature);
  }
}
