/** Stored guarantees and balances in their JSON (wire) form for the read endpoints. */
import type { Balance, Balances, Guarantee } from "../../sdk/api-guarantees";
import { type GuaranteeClaims, parseValidationPolicy, toWireClaims } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import { formatUint, ZERO_ADDRESS } from "../../sdk/wire";
import { isoFromSeconds } from "../clock";
import { collateralFactorBps, type OperatorConfig } from "../config";
import type { DeploymentInfo } from "../deployment";
import type { ActiveReserve, CollateralBalance, StoredGuarantee } from "../store";
import { availableCollateral, reserveHold } from "./capacity";
import { isAsyncBlsSigner } from "./signing-worker";
import { getBytes, hexlify } from "ethers";
import type { BlsSigner } from "../../sdk/bls";

/** The claims a stored guarantee was issued for (the policy is stored in its wire form). */
export function claimsOfRecord(record: StoredGuarantee): GuaranteeClaims {
  const base = {
    user: record.user,
    recipient: record.recipient,
    reqId: record.reqId,
    amount: record.amount,
    asset: record.asset,
    timestamp: record.timestamp,
  };
  if (record.version === 1) return { version: 1, ...base };
  return { version: 2, ...base, policy: parseValidationPolicy(record.policy, "stored.validation_policy") };
}

/** `GET /core/guarantees/{id}`: the type of its schema (sdk/api-guarantees.ts). */
export type GuaranteeView = Guarantee;

/** The view of `record` on chain `chainId` (the request hash binds the chain). */
export function guaranteeView(record: StoredGuarantee, chainId: number): GuaranteeView {
  const claims = claimsOfRecord(record);
  return {
    guarantee_id: record.guaranteeId,
    state: record.state,
    claims: toWireClaims(claims),
    scheme: record.scheme,
    signature: record.signature,
    certificate: { claims: record.certificateClaims, signature: record.certificateSignature },
    created_at: isoFromSeconds(record.createdAt),
    updated_at: isoFromSeconds(record.updatedAt),
    cycle_id: record.cycleId,
    excluded_reason: record.excludedReason,
    // The same function the lifecycle matches registry responses with.
    validation_request_hash:
      claims.version === 1 ? null : validationRequestHash(chainId, claims.policy, record.guaranteeId),
    finalization_signature: record.finalizationSignature ?? null,
  };
}

/**
 * `view` with its certificate re-signed by Core's current key (`GET /core/guarantees/{id}`): the stored
 * certificate was signed at issuance, and after a rotation of the Vault's operator key it no longer verifies
 * on chain (`remunerate`, `registerReserve`, `disputeCredit`); the same claims signed with the current key do.
 * BLS signatures are deterministic: under an unchanged key this is the stored certificate, byte for byte.
 */
export async function withCurrentCertificate(view: GuaranteeView, signer: BlsSigner): Promise<GuaranteeView> {
  const message = getBytes(view.certificate.claims);
  const signature = isAsyncBlsSigner(signer) ? await signer.signAsync(message) : signer.sign(message);
  return { ...view, certificate: { claims: view.certificate.claims, signature: hexlify(signature) } };
}

const ETH_DECIMALS = 18;

/** One asset of `GET /core/users/{address}/balances` (sdk/api-guarantees.ts). */
export type BalanceView = Balance;

/** ETH first, then the deployment's tokens, then any other asset the store holds for the user. */
export function balancesView(
  config: OperatorConfig,
  deployment: DeploymentInfo,
  user: string,
  stored: readonly CollateralBalance[],
  reserves: readonly ActiveReserve[],
): Balances {
  type Asset = { address: string; symbol: string | null; decimals: number | null };
  const known: Asset[] = [
    { address: ZERO_ADDRESS, symbol: "ETH", decimals: ETH_DECIMALS },
    ...deployment.tokens.map((t) => ({ address: t.address, symbol: t.symbol, decimals: t.decimals })),
  ];
  const byAsset = new Map(stored.map((balance) => [balance.asset, balance]));
  const rows = known.map((asset) => ({ asset, balance: byAsset.get(asset.address) }));
  for (const balance of stored) {
    if (!known.some((asset) => asset.address === balance.asset)) {
      rows.push({ asset: { address: balance.asset, symbol: null, decimals: null }, balance });
    }
  }
  return {
    user_address: user,
    balances: rows.map(({ asset, balance }) => {
      const b = balance ?? { user, asset: asset.address, deposited: 0n, locked: 0n, pendingWithdrawal: 0n };
      const factor = collateralFactorBps(config, asset.address);
      return {
        asset_address: asset.address,
        symbol: asset.symbol,
        decimals: asset.decimals,
        deposited: formatUint(b.deposited),
        locked: formatUint(b.locked),
        pending_withdrawal: formatUint(b.pendingWithdrawal),
        reserve_hold: formatUint(reserveHold(b, reserves)),
        available: formatUint(availableCollateral(b, reserves, factor)),
        collateral_factor_bps: factor,
      };
    }),
  };
}
