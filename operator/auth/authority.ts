/**
 * Who may do what (docs/operator-auth.md). Tokens carry scopes; whether a
 * wallet may issue a guarantee for a given recipient is decided at issuance
 * against the current config, so adding or removing a facilitator takes
 * effect without waiting for tokens to expire.
 */
import { sameAddress } from "../../sdk/wire";
import type { OperatorConfig } from "../config";

/** Scope to call `POST /core/guarantees` at all. */
export const SCOPE_ISSUE_GUARANTEES = "guarantees:issue";
/** Scopes every signed-in wallet receives. */
export const DEFAULT_SCOPES: readonly string[] = Object.freeze([SCOPE_ISSUE_GUARANTEES]);

/** The authenticated caller of a request. */
export interface Principal {
  /** EIP-55 checksummed wallet that signed in. */
  wallet: string;
  scopes: readonly string[];
  /** Access token id (`jti`), for logs. */
  tokenId: string;
  /** Access token expiry (unix seconds). */
  expiresAt: number;
}

export function hasScope(principal: Principal, scope: string): boolean {
  return principal.scopes.includes(scope);
}

export function isFacilitator(config: Pick<OperatorConfig, "facilitators">, wallet: string): boolean {
  return config.facilitators.some((facilitator) => sameAddress(facilitator, wallet));
}

/** A wallet of `SURETY_ADMIN_WALLETS`: the admin API, and every read of the console (docs/operator-auth.md). */
export function isAdmin(config: Pick<OperatorConfig, "adminWallets">, wallet: string): boolean {
  return config.adminWallets.some((admin) => sameAddress(admin, wallet));
}

/**
 * Issuance authority: the token must carry {@link SCOPE_ISSUE_GUARANTEES},
 * and the recipient must be the caller itself unless the caller is a
 * configured facilitator (which may issue for any recipient).
 */
export function canIssueFor(
  config: Pick<OperatorConfig, "facilitators">,
  principal: Principal,
  recipient: string,
): boolean {
  if (!hasScope(principal, SCOPE_ISSUE_GUARANTEES)) return false;
  return sameAddress(principal.wallet, recipient) || isFacilitator(config, principal.wallet);
}
