/** What the facilitator's routes need, built once per app (DI: tests swap clock, Core client, deployment). */
import type { Logger } from "pino";
import type { Clock } from "../clock";
import type { FacilitatorConfig } from "../config";
import type { CoreApi } from "../core-client";
import type { DeploymentParams } from "../deployment";
import type { TimestampWindow } from "../verify";
import type { VaultCheck } from "../vault-check";
import type { ContractWalletCheck } from "../contract-wallets";

export interface FacilitatorContext {
  config: FacilitatorConfig;
  clock: Clock;
  core: CoreApi;
  logger: Logger;
  /** The facilitator wallet's address (its SIWE identity; listed in `/supported` signers). */
  wallet: string;
  timestampWindow: TimestampWindow;
  /** The deployment payments are checked against: the pinned one, else Core's (cached) public params. */
  deployment(): Promise<DeploymentParams>;
  /** Pinned deployment parameters, when the deployment does not come from Core. */
  pinnedDeployment: DeploymentParams | null;
  /** Checks Core's key and Vault against the chain; null when no RPC URL is configured. */
  vaultCheck: VaultCheck | null;
  /** Contract-wallet payers' registered signing keys on chain; null when no RPC URL is configured (EOAs only). */
  contractWallets: ContractWalletCheck | null;
}

/** The deployment could not be loaded from Core: routes answer 500 (health 503). */
export class DeploymentUnavailableError extends Error {
  override readonly name = "DeploymentUnavailableError";
}

/** The deployment, or a DeploymentUnavailableError carrying why (Core down, unusable params …). */
export async function loadDeployment(context: FacilitatorContext): Promise<DeploymentParams> {
  try {
    return await context.deployment();
  } catch (error) {
    context.logger.warn({ err: error }, "deployment parameters unavailable");
    const detail = error instanceof Error ? error.message : String(error);
    throw new DeploymentUnavailableError(`deployment parameters unavailable: ${detail}`);
  }
}
