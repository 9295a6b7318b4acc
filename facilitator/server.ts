/**
 * `startFacilitatorServer`: the facilitator on a TCP port (port 0 = a free
 * one). `close()` stops accepting connections, closes idle keep-alive
 * connections at once and cuts busy ones after a drain timeout.
 */
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { computeAddress } from "ethers";
import { createFacilitatorApp } from "./api/app";
import type { FacilitatorContext } from "./api/context";
import { type Clock, systemClock } from "./clock";
import type { FacilitatorConfig } from "./config";
import { type CoreApi, CoreClient } from "./core-client";
import type { DeploymentParams } from "./deployment";
import { createFacilitatorLogger, type Logger } from "./logger";
import { ChainVaultCheck, type VaultCheck } from "./vault-check";
import { ChainContractWallets, type ContractWalletCheck } from "./contract-wallets";
import { createExpressServer } from "../runtime/express-server";

/** How long close() waits for in-flight requests before cutting their connections. */
export const DRAIN_TIMEOUT_MS = 10_000;

export interface FacilitatorServerDeps {
  clock?: Clock;
  logger?: Logger;
  /** Core client; defaults to a {@link CoreClient} for `config.coreUrl`. */
  core?: CoreApi;
  /**
   * Pin the deployment parameters instead of taking them from Core's public
   * params (tests; or an operator who wants the EIP-712 domain and BLS key
   * fixed by configuration). Health still requires Core to agree on chain and Vault.
   */
  deployment?: DeploymentParams;
  /** Check of Core against the Vault; defaults to one over `config.rpcUrl` (none without it). */
  vaultCheck?: VaultCheck | null;
  /** Contract-wallet payers' registered signing keys; defaults to a reader over `config.rpcUrl` (none without it). */
  contractWallets?: ContractWalletCheck | null;
}

export interface FacilitatorServer {
  /** Base URL, e.g. `http://127.0.0.1:8402`. */
  url: string;
  port: number;
  app: Express;
  context: FacilitatorContext;
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** Builds the routes' context from config and deps. */
export function createFacilitatorContext(
  config: FacilitatorConfig,
  deps: FacilitatorServerDeps = {},
): FacilitatorContext {
  const clock = deps.clock ?? systemClock;
  const core = deps.core ?? new CoreClient({ config, clock });
  const pinned = deps.deployment ?? null;
  return {
    config,
    clock,
    core,
    logger: deps.logger ?? createFacilitatorLogger(config.logLevel),
    wallet: computeAddress(config.privateKey),
    timestampWindow: {
      pastSeconds: config.timestampWindowPastSeconds,
      futureSeconds: config.timestampWindowFutureSeconds,
    },
    deployment: pinned !== null ? () => Promise.resolve(pinned) : () => core.getDeployment(),
    pinnedDeployment: pinned,
    vaultCheck:
      deps.vaultCheck !== undefined
        ? deps.vaultCheck
        : config.rpcUrl === null
          ? null
          : ChainVaultCheck.fromUrl(config.rpcUrl, config.coreTimeoutMs),
    contractWallets:
      deps.contractWallets !== undefined
        ? deps.contractWallets
        : config.rpcUrl === null
          ? null
          : new ChainContractWallets(config.rpcUrl, config.coreTimeoutMs),
  };
}

/**
 * Logs at startup whether Core matches the Vault on chain. A mismatch does not stop the process:
 * `/settle` refuses and `/health` reports it until Core or the Vault is fixed.
 */
async function checkAtStartup(context: FacilitatorContext): Promise<void> {
  const { vaultCheck, logger } = context;
  if (vaultCheck === null) {
    logger.warn("no SURETY_FACILITATOR_RPC_URL: Core's BLS key is not checked against the Vault");
    return;
  }
  let deployment;
  try {
    deployment = await context.deployment();
  } catch (error) {
    logger.warn({ err: error }, "Core's public params unavailable at startup; the Vault is checked later");
    return;
  }
  const result = await vaultCheck.check(deployment);
  if (result.ok) logger.info({ vault: deployment.vault }, "Core's BLS key matches the Vault's operator key");
  else logger.error({ reason: result.reason }, "Core does not match the Vault on chain: /settle refused");
}

export async function startFacilitatorServer(
  config: FacilitatorConfig,
  deps: FacilitatorServerDeps = {},
): Promise<FacilitatorServer> {
  const context = createFacilitatorContext(config, deps);
  const app = createFacilitatorApp(context);
  const server = createExpressServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  context.logger.info({ port, core: config.coreUrl, wallet: context.wallet }, "facilitator listening");
  await checkAtStartup(context);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      const cutoff = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
      cutoff.unref();
      server.close(() => {
        clearTimeout(cutoff);
        context.logger.info("facilitator stopped");
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };

  return { url: `http://${urlHost(config.host)}:${port}`, port, app, context, close };
}
