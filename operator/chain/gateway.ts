/**
 * Chain access behind one small interface, so routes and startup checks take
 * it by injection: production talks JSON-RPC to `config.rpcUrl`, tests pass
 * the in-process Hardhat network's provider. Every call is bounded by a
 * timeout: a hung RPC endpoint makes a health check answer `fail`, never hang.
 */
import { Contract, FetchRequest, JsonRpcProvider, Network, toQuantity } from "ethers";
import type { Vault } from "../../typechain-types";
import { publicKeyFromEip2537 } from "../../sdk/bls";
import type { RegisteredSigningKey } from "../../sdk/signing-keys";
import { parseAddress } from "../../sdk/wire";
import { vaultInterface } from "./abi";

/** The JSON-RPC surface we need; ethers' JsonRpcProvider and Hardhat's `ethers.provider` both have it. */
export interface JsonRpcSender {
  send(method: string, params: unknown[]): Promise<unknown>;
}

/** What the Vault says about Core's certificate key. */
export type VaultOperatorKey = { set: false } | { set: true; publicKey: Uint8Array };

export interface ChainGateway {
  /** `eth_chainId` of the connected node. */
  chainId(): Promise<number>;
  /** Latest block number (a cheap liveness probe). */
  blockNumber(): Promise<number>;
  /**
   * The operator BLS key stored in the Vault at `vault` (96 compressed bytes, G2),
   * or `{ set: false }`. Throws {@link ChainError} when there is no contract
   * at `vault` or it does not answer the Vault's getters.
   */
  vaultOperatorKey(vault: string): Promise<VaultOperatorKey>;
  /**
   * The EIP-712 domain separator the Vault at `vault` checks payers' signatures under
   * (`Vault.guaranteeDomainSeparator()`), lower-case hex. Throws {@link ChainError} like
   * {@link vaultOperatorKey}.
   */
  vaultGuaranteeDomainSeparator(vault: string): Promise<string>;
  /** Whether the Vault's setup is over (`Vault.setupFinished()`: role and key changes are timelocked). */
  vaultSetupFinished(vault: string): Promise<boolean>;
  /**
   * `Vault.guaranteeSigner(payer)` of the Vault at `vault` at block `blockNumber` (default: the latest):
   * the latest guarantee signing key `payer` registered and the claims timestamp it signs from (a zero key:
   * none). Optional: a gateway without it makes Core accept payers' own ECDSA signatures only.
   */
  vaultGuaranteeSigner?(vault: string, payer: string, blockNumber?: number): Promise<RegisteredSigningKey>;
  /** Releases the connection (idempotent). */
  close(): Promise<void>;
}

/** The chain could not be reached in time or answered something unusable. */
export class ChainError extends Error {
  override readonly name = "ChainError";
}

function quantity(value: unknown, what: string): number {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]+$/.test(value)) {
    throw new ChainError(`${what}: node answered ${JSON.stringify(value)}, not a hex quantity`);
  }
  const parsed = Number.parseInt(value, 16);
  if (!Number.isSafeInteger(parsed)) throw new ChainError(`${what}: ${value} is out of range`);
  return parsed;
}

/** Rejects with a ChainError after `ms`; the timer never keeps the process alive. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ChainError(`${what}: no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface RpcChainGatewayOptions {
  /** Upper bound on each call. */
  timeoutMs: number;
  /** Called once by close() (e.g. destroy the provider the gateway owns). */
  onClose?: () => void | Promise<void>;
}

export class RpcChainGateway implements ChainGateway {
  private closed = false;

  constructor(
    private readonly rpc: JsonRpcSender,
    private readonly options: RpcChainGatewayOptions,
  ) {}

  /**
   * A gateway over HTTP(S)/WS JSON-RPC at `url`. The network is fixed to the
   * configured chain id (no detection loop that would retry forever against a
   * dead node); {@link chainId} still asks the node, so a mismatch is caught.
   */
  static fromUrl(url: string, chainId: number, timeoutMs: number): RpcChainGateway {
    const request = new FetchRequest(url);
    request.timeout = timeoutMs;
    const provider = new JsonRpcProvider(request, undefined, {
      staticNetwork: Network.from(chainId),
      batchMaxCount: 1,
    });
    return new RpcChainGateway(provider, { timeoutMs, onClose: () => provider.destroy() });
  }

  private async call(method: string, params: unknown[]): Promise<unknown> {
    if (this.closed) throw new ChainError(`${method}: chain gateway is closed`);
    try {
      return await withTimeout(this.rpc.send(method, params), this.options.timeoutMs, method);
    } catch (error) {
      if (error instanceof ChainError) throw error;
      throw new ChainError(`${method} failed: ${(error as Error).message}`);
    }
  }

  async chainId(): Promise<number> {
    return quantity(await this.call("eth_chainId", []), "eth_chainId");
  }

  async blockNumber(): Promise<number> {
    return quantity(await this.call("eth_blockNumber", []), "eth_blockNumber");
  }

  async vaultGuaranteeDomainSeparator(vault: string): Promise<string> {
    const separator = await this.readVault(vault, "guaranteeDomainSeparator", (v) =>
      v.guaranteeDomainSeparator(),
    );
    return separator.toLowerCase();
  }

  async vaultSetupFinished(vault: string): Promise<boolean> {
    return (await this.readVault(vault, "setupFinished", (v) => v.setupFinished())) === true;
  }

  async vaultGuaranteeSigner(
    vault: string,
    payer: string,
    blockNumber?: number,
  ): Promise<RegisteredSigningKey> {
    const address = parseAddress(vault, "vault");
    const tag = blockNumber === undefined ? "latest" : toQuantity(blockNumber);
    const contract = new Contract(address, vaultInterface, {
      provider: null,
      call: async (tx) => (await this.call("eth_call", [{ to: tx.to, data: tx.data }, tag])) as string,
    }) as unknown as Vault;
    let latest;
    try {
      latest = await contract.guaranteeSigner(parseAddress(payer, "payer"));
    } catch (error) {
      if (error instanceof ChainError) throw error;
      throw new ChainError(
        `the contract at ${address} does not answer Vault.guaranteeSigner() (is it the Vault?)`,
      );
    }
    return { key: latest.key, effectiveFrom: Number(latest.effectiveFrom) };
  }

  /**
   * The Vault at `vault` as a typed contract whose view calls go through this gateway's bounded
   * `eth_call`, after checking that there is code at the address.
   */
  private async readVault<T>(vault: string, name: string, read: (contract: Vault) => Promise<T>): Promise<T> {
    const address = parseAddress(vault, "vault");
    const code = await this.call("eth_getCode", [address, "latest"]);
    if (typeof code !== "string" || code === "0x" || code === "0x0") {
      throw new ChainError(`no contract at the Vault address ${address} on this chain`);
    }
    const contract = new Contract(address, vaultInterface, {
      provider: null,
      call: async (tx) => (await this.call("eth_call", [{ to: tx.to, data: tx.data }, "latest"])) as string,
    }) as unknown as Vault;
    try {
      return await read(contract);
    } catch (error) {
      if (error instanceof ChainError) throw error;
      throw new ChainError(`the contract at ${address} does not answer Vault.${name}() (is it the Vault?)`);
    }
  }

  async vaultOperatorKey(vault: string): Promise<VaultOperatorKey> {
    const isSet = await this.readVault(vault, "operatorKeySet", (v) => v.operatorKeySet());
    if (isSet !== true) return { set: false };
    const point = await this.readVault(vault, "operatorKey", (v) => v.operatorKey());
    const { x_c0_a, x_c0_b, x_c1_a, x_c1_b, y_c0_a, y_c0_b, y_c1_a, y_c1_b } = point;
    try {
      return {
        set: true,
        publicKey: publicKeyFromEip2537(
          { x_c0_a, x_c0_b, x_c1_a, x_c1_b, y_c0_a, y_c0_b, y_c1_a, y_c1_b },
          "Vault.operatorKey",
        ),
      };
    } catch (error) {
      throw new ChainError(`Vault.operatorKey() is not a valid G2 point: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.options.onClose?.();
  }
}
