/**
 * Contract-wallet payers at the facilitator, checked as Core's issuance and the Vault check them
 * (docs/protocol.md "Payer signatures", sdk/signing-keys.ts): a signature that does not recover to
 * `claims.user_address` is the payer's only if it recovers to the EOA key the payer registered in the Vault
 * (`Vault.setGuaranteeSigner`); never the wallet's ERC-1271 answer, which it could change after being served.
 *
 * The facilitator reaches the chain through `SURETY_FACILITATOR_RPC_URL` and reads the Vault through the
 * typechain binding: the latest block, then `Vault.guaranteeSigner(payer)` at that block, whose time is the
 * rule's `now` (so "a change is pending" is judged by chain time, as Core judges it). Nothing is cached: only
 * payers whose ECDSA recovery failed cost these two reads. A node that cannot be asked in time is a
 * {@link ContractWalletUnavailableError}, never a refusal: the payment may be valid.
 */
import { FetchRequest, JsonRpcProvider, Network, type Provider } from "ethers";
import type { RegisteredSigningKey } from "../sdk/signing-keys";
import { Vault__factory } from "../typechain-types";

const vaultInterface = Vault__factory.createInterface();

/** `code` of `/verify` (and `error` of `/settle`) when the chain could not be asked about a contract wallet. */
export const SIGNATURE_CHECK_UNAVAILABLE = "signature_check_unavailable";

/** The chain could not be asked (unreachable, too slow, a malformed answer). */
export class ContractWalletUnavailableError extends Error {
  override readonly name = "ContractWalletUnavailableError";
}

/** What the Vault says about a payer's registered signing key, and when. */
export interface SigningKeyRead {
  /** `Vault.guaranteeSigner(payer)`; null when the payer registered none. */
  registered: RegisteredSigningKey | null;
  /** The time of the block it was read at. */
  blockTimestamp: number;
}

/** Reads of payers' registered signing keys (DI: tests may pass their own). */
export interface ContractWalletCheck {
  /**
   * The latest signing key `payer` registered in the Vault at `vault`, read at the latest block. Throws
   * {@link ContractWalletUnavailableError} when the chain cannot be asked.
   */
  signingKey(chainId: number, vault: string, payer: string): Promise<SigningKeyRead>;
}

/** A {@link ContractWalletCheck} over a JSON-RPC node, one provider per chain id. */
export class ChainContractWallets implements ContractWalletCheck {
  private readonly providers = new Map<number, Provider>();

  /** `timeoutMs` bounds each chain read: a dead node makes the check fail, never hang. */
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async signingKey(chainId: number, vault: string, payer: string): Promise<SigningKeyRead> {
    const provider = this.provider(chainId);
    try {
      const block = await this.bounded(provider.getBlock("latest"), "the latest block");
      if (block === null) throw new ContractWalletUnavailableError("the node has no latest block");
      const data = vaultInterface.encodeFunctionData("guaranteeSigner", [payer]);
      const answer = await this.bounded(
        provider.call({ to: vault, data, blockTag: block.number }),
        `Vault.guaranteeSigner(${payer})`,
      );
      const [latest] = vaultInterface.decodeFunctionResult("guaranteeSigner", answer);
      const key = String(latest.key);
      const registered = /^0x0{40}$/i.test(key) ? null : { key, effectiveFrom: Number(latest.effectiveFrom) };
      return { registered, blockTimestamp: block.timestamp };
    } catch (error) {
      throw unavailable(error);
    }
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
