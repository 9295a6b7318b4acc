/**
 * Contract-wallet payers (ERC-1271) at the facilitator, checked as Core's issuance and the Vault check
 * them (contracts/lib/GuaranteeSignature.sol, OpenZeppelin `SignatureChecker`): only when the ECDSA
 * recovery does not give `claims.user_address`, only if that address has code, and then by the wallet's
 * own `isValidSignature(hash, signature)` at the latest block, whose first return word must be exactly
 * the magic value `0x1626ba7e` (a revert or anything else is a refusal).
 *
 * The facilitator reaches the chain through `SURETY_FACILITATOR_RPC_URL` and the typechain `IERC1271`
 * binding (its interface encodes the call; the answer is compared as a raw word, as the contract does).
 * Code presence is cached per address: "has code" for good (code does not go away since EIP-6780),
 * "no code" for {@link NO_CODE_TTL_SECONDS} only (a counterfactual wallet may be deployed later; the TTL
 * bounds the `eth_getCode` calls bad signatures can cause). The wallet's answer is never cached: a wallet
 * may change its owners. A node that cannot be asked in time is a {@link ContractWalletUnavailableError},
 * never a refusal: the payment may be valid.
 */
import { FetchRequest, isError, JsonRpcProvider, Network, type Provider } from "ethers";
import { IERC1271__factory } from "../typechain-types";
import type { Clock } from "./clock";
import { CodePresenceCache, NO_CODE_TTL_SECONDS } from "../runtime/code-presence";

export { NO_CODE_TTL_SECONDS } from "../runtime/code-presence";
/** `isValidSignature(bytes32,bytes)`'s selector, as the first 32-byte word a wallet must return. */
const ERC1271_MAGIC_WORD = "0x1626ba7e" + "00".repeat(28);
const erc1271 = IERC1271__factory.createInterface();

/** `code` of `/verify` (and `error` of `/settle`) when the chain could not be asked about a contract wallet. */
export const SIGNATURE_CHECK_UNAVAILABLE = "signature_check_unavailable";

/** The chain could not be asked (unreachable, too slow, a malformed answer). */
export class ContractWalletUnavailableError extends Error {
  override readonly name = "ContractWalletUnavailableError";
}

/** What the chain says about a payer and a signature. */
export type ContractWalletVerdict =
  /** The payer address has no code: an EOA (or a wallet not deployed yet). */
  | "not_a_contract"
  /** The payer is a contract whose `isValidSignature` returns the magic value. */
  | "accepted"
  /** The payer is a contract that reverts or answers anything else. */
  | "refused";

/** ERC-1271 checks against a chain (DI: tests may pass their own). */
export interface ContractWalletCheck {
  /**
   * Asks whether the contract at `payer` accepts `signature` over `hash` (the 32 bytes the scheme
   * signs, 0x-hex). Throws {@link ContractWalletUnavailableError} when the chain cannot be asked.
   */
  verdict(chainId: number, payer: string, hash: string, signature: string): Promise<ContractWalletVerdict>;
}

/** A {@link ContractWalletCheck} over a JSON-RPC node, one provider per chain id. */
export class ChainContractWallets implements ContractWalletCheck {
  private readonly code: CodePresenceCache;
  private readonly providers = new Map<number, Provider>();

  /** `timeoutMs` bounds each chain read: a dead node makes the check fail, never hang. */
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    clock: Clock,
    noCodeTtlSeconds = NO_CODE_TTL_SECONDS,
  ) {
    this.code = new CodePresenceCache(clock, noCodeTtlSeconds);
  }

  async verdict(
    chainId: number,
    payer: string,
    hash: string,
    signature: string,
  ): Promise<ContractWalletVerdict> {
    const provider = this.provider(chainId);
    if (!(await this.isContract(provider, payer))) return "not_a_contract";
    const data = erc1271.encodeFunctionData("isValidSignature", [hash, signature]);
    let answer: string;
    try {
      answer = await this.bounded(provider.call({ to: payer, data }), `isValidSignature of ${payer}`);
    } catch (error) {
      // A revert is the wallet's "no" (as SignatureChecker reads it); a dead node is not.
      if (isError(error, "CALL_EXCEPTION")) return "refused";
      throw unavailable(error);
    }
    return answer.slice(0, 66).toLowerCase() === ERC1271_MAGIC_WORD ? "accepted" : "refused";
  }

  /**
   * The provider for `chainId`, with that network fixed: ethers then never probes the node for its
   * network (which retries forever against a dead node). That the node serves Core's chain is checked
   * by the Vault check (`vault-check.ts`) on every public-params load and `/health`.
   */
  private provider(chainId: number): Provider {
    let provider = this.providers.get(chainId);
    if (provider === undefined) {
      const request = new FetchRequest(this.url);
      request.timeout = this.timeoutMs;
      const network = Network.from(chainId);
      provider = new JsonRpcProvider(request, network, { staticNetwork: network, batchMaxCount: 1 });
      this.providers.set(chainId, provider);
    }
    return provider;
  }

  private isContract(provider: Provider, address: string): Promise<boolean> {
    return this.code.isContract(address, async () => {
      let code: string;
      try {
        code = await this.bounded(provider.getCode(address), `eth_getCode of ${address}`);
      } catch (error) {
        throw unavailable(error);
      }
      return code !== "0x" && code !== "0x0";
    });
  }

  private async bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ContractWalletUnavailableError(
              `${what}: the chain did not answer within ${this.timeoutMs} ms`,
            ),
          ),
        this.timeoutMs,
      );
      timer.unref();
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  /** Stops the providers (idempotent). */
  close(): void {
    for (const provider of this.providers.values()) (provider as JsonRpcProvider).destroy();
    this.providers.clear();
  }
}

function unavailable(error: unknown): ContractWalletUnavailableError {
  if (error instanceof ContractWalletUnavailableError) return error;
  const detail =
    error instanceof Error
      ? ((error as { shortMessage?: string }).shortMessage ?? error.message)
      : String(error);
  return new ContractWalletUnavailableError(`the chain could not be asked: ${detail}`);
}
