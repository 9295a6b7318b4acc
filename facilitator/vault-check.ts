/**
 * The facilitator's check of Core against the chain: the Vault named in Core's public params must
 * exist and hold Core's BLS public key as its operator key. Otherwise Core is misconfigured (another
 * key, another Vault) or its key was rotated on chain, and every certificate it issued now would be
 * refused by `Vault.remunerate`: the facilitator stops settling (`/settle` 500 `vault_mismatch`) and
 * `/health` answers 503 until the two agree again. Reads go through the typechain Vault binding.
 */
import { Contract, FetchRequest, hexlify, JsonRpcProvider, type ContractRunner } from "ethers";
import { publicKeyFromEip2537 } from "../sdk/bls";
import { Vault__factory, type Vault } from "../typechain-types";
import type { DeploymentParams } from "./deployment";

/** `error` of a `/settle` refused because Core's key or Vault does not match the chain. */
export const VAULT_MISMATCH = "vault_mismatch";

/** Parsed once: the factory's `connect` parses the whole ABI on every call (milliseconds). */
const vaultInterface = Vault__factory.createInterface();

export type VaultCheckResult = { ok: true } | { ok: false; reason: string };

/** Checks a deployment (Core's public params) against the Vault on chain. */
export interface VaultCheck {
  check(deployment: DeploymentParams): Promise<VaultCheckResult>;
}

/**
 * A {@link VaultCheck} over `runner` (a JSON-RPC provider). A match is remembered per deployment
 * object — Core's client builds a new one on every public-params refresh, so each refresh is checked
 * again — while a mismatch or an unreachable chain is re-checked on every call, so recovery is seen
 * at once.
 */
export class ChainVaultCheck implements VaultCheck {
  private readonly matched = new WeakSet<DeploymentParams>();

  /** `timeoutMs` bounds a whole check: a dead node makes it fail, never hang. */
  constructor(
    private readonly runner: ContractRunner,
    private readonly timeoutMs: number,
  ) {}

  /** A check against the node at `url`. */
  static fromUrl(url: string, timeoutMs: number): ChainVaultCheck {
    const request = new FetchRequest(url);
    request.timeout = timeoutMs;
    return new ChainVaultCheck(new JsonRpcProvider(request, undefined, { batchMaxCount: 1 }), timeoutMs);
  }

  async check(deployment: DeploymentParams): Promise<VaultCheckResult> {
    if (this.matched.has(deployment)) return { ok: true };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<VaultCheckResult>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, reason: `the chain did not answer within ${this.timeoutMs} ms` }),
        this.timeoutMs,
      );
      timer.unref();
    });
    const result = await Promise.race([this.compare(deployment), timeout]).finally(() => clearTimeout(timer));
    if (result.ok) this.matched.add(deployment);
    return result;
  }

  private async compare(deployment: DeploymentParams): Promise<VaultCheckResult> {
    const { vault } = deployment;
    const provider = this.runner.provider;
    try {
      if (provider !== null) {
        const network = await provider.getNetwork();
        if (Number(network.chainId) !== deployment.chainId) {
          return {
            ok: false,
            reason: `the facilitator's RPC serves chain ${network.chainId}, Core serves chain ${deployment.chainId}`,
          };
        }
        if ((await provider.getCode(vault)) === "0x") {
          return { ok: false, reason: `no contract at Core's Vault address ${vault} on chain` };
        }
      }
      const contract = new Contract(vault, vaultInterface, this.runner) as unknown as Vault;
      if (!(await contract.operatorKeySet())) {
        return { ok: false, reason: `the Vault at ${vault} has no operator key` };
      }
      const point = await contract.operatorKey();
      const onChain = publicKeyFromEip2537(point, "Vault.operatorKey");
      if (hexlify(onChain) !== hexlify(deployment.blsPublicKey)) {
        return {
          ok: false,
          reason: `Core's BLS public key ${hexlify(deployment.blsPublicKey)} is not the Vault's operator key ${hexlify(onChain)} (Vault ${vault})`,
        };
      }
      return { ok: true };
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return { ok: false, reason: `the Vault at ${vault} could not be read: ${detail}` };
    }
  }
}
