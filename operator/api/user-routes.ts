/**
 * The user resource (docs/operator-api.md, docs/operator-async.md): a user's collateral balances and its
 * withdrawals with what is withdrawable. Both require a bearer token of the user, of a facilitator or of
 * an admin wallet (403 otherwise).
 *
 *   GET  /core/users/:address/balances       deposited, locked, available per asset
 *   GET  /core/users/:address/withdrawals    withdrawals and what is withdrawable
 */
import { type Request, Router } from "express";
import { formatUint, parseAddress, sameAddress } from "../../sdk/wire";
import { isAdmin, isFacilitator } from "../auth";
import { withdrawalReadyAt } from "../chain/timings";
import { balancesView } from "../guarantees";
import { freeCollateral, reserveHold } from "../guarantees/capacity";
import { principalOf, requireAccessToken } from "./access-middleware";
import type { RouteModule } from "./context";
import { forbidden } from "./errors";
import { pathParam, validate, validated } from "./validation";

const iso = (seconds: number | null) => (seconds === null ? null : new Date(seconds * 1000).toISOString());

export const userRoutes: RouteModule = (context) => {
  const { store, config, deployment } = context;
  const router = Router();
  const userParam = validate(pathParam("address", parseAddress));
  const authenticated = requireAccessToken(context.accessTokens);
  const isSelfOrFacilitator = (req: Request, address: string) => {
    const { wallet } = principalOf(req);
    return sameAddress(wallet, address) || isFacilitator(config, wallet) || isAdmin(config, wallet);
  };

  router.get("/core/users/:address/balances", authenticated, ...userParam, async (req, res) => {
    const { address: user } = validated<{ address: string }>(req);
    if (!isSelfOrFacilitator(req, user)) {
      throw forbidden(
        "not_authorized_for_user",
        "balances are visible to the user, facilitators and admin wallets only",
      );
    }
    // One snapshot: an indexed reserve event between the two reads would skew `available`.
    const [balances, reserves] = await store.transaction(async (tx) =>
      Promise.all([tx.listCollateral(user), tx.listReserves(user)]),
    );
    res.json(balancesView(config, deployment, user, balances, reserves));
  });

  router.get("/core/users/:address/withdrawals", authenticated, ...userParam, async (req, res) => {
    const { address: user } = validated<{ address: string }>(req);
    if (!isSelfOrFacilitator(req, user)) {
      throw forbidden(
        "not_authorized_for_user",
        "withdrawals are visible to the user, facilitators and admin wallets only",
      );
    }
    const timings = context.timings.get();
    // One snapshot of withdrawals, balances and reserves (the indexer may apply events in between reads).
    const [withdrawals, balances, reserves] = await store.transaction(async (tx) =>
      Promise.all([tx.listWithdrawals(user), tx.listCollateral(user), tx.listReserves(user)]),
    );
    res.json({
      user_address: user,
      withdrawable: balances.map((b) => {
        // Core's locks and the on-chain reserves beyond them (operator/guarantees/capacity.ts).
        const free = freeCollateral(b, reserves);
        const open = withdrawals.find((w) => w.state === "PENDING" && sameAddress(w.asset, b.asset));
        return {
          asset_address: b.asset,
          deposited: formatUint(b.deposited),
          locked: formatUint(b.locked),
          pending_withdrawal: formatUint(b.pendingWithdrawal),
          reserve_hold: formatUint(reserveHold(b, reserves)),
          // What a withdrawal may take without touching collateral held for guarantees, debits and reserves.
          free: formatUint(free),
          // What finalizing the open request would pay by Core's books: min(requested, free).
          finalizable_amount: open ? formatUint(open.amount < free ? open.amount : free) : null,
          finalizable_at: open ? iso(withdrawalReadyAt(open, timings)) : null,
        };
      }),
      withdrawals: withdrawals.map((w) => ({
        withdrawal_id: String(w.withdrawalId),
        asset_address: w.asset,
        amount: formatUint(w.amount),
        state: w.state,
        requested_at: iso(w.requestedAt),
        finalizable_at: iso(withdrawalReadyAt(w, timings)),
        paid: w.paid === null ? null : formatUint(w.paid),
        closed_at: iso(w.closedAt),
      })),
    });
  });

  return router;
};
