/**
 * The user resource (docs/operator-api.md, docs/operator-async.md): a user's collateral balances and its
 * withdrawals with what is withdrawable. Both require a bearer token of the user, of a facilitator or of
 * an admin wallet (403 otherwise).
 *
 *   GET  /core/users?asset&limit&cursor       every payer's non-empty balances (admin wallets only)
 *   GET  /core/users/:address/balances       deposited, locked, available per asset
 *   GET  /core/users/:address/withdrawals    withdrawals and what is withdrawable
 */
import type { CollateralList, Withdrawals } from "../../sdk/api-guarantees";
import { type Request, Router } from "express";
import { WireError } from "../../sdk/errors";
import { formatUint, parseAddress, sameAddress } from "../../sdk/wire";
import { isAdmin, isFacilitator } from "../auth";
import { withdrawalReadyAt } from "../chain/timings";
import { balancesView } from "../guarantees";
import { freeCollateral, reserveHold } from "../guarantees/capacity";
import { principalOf, requireAccessToken } from "./access-middleware";
import type { StoreAreas } from "../store";
import type { RouteModule } from "./context";
import { forbidden } from "./errors";
import {
  CURSOR_PARAMETER,
  NOT_AUTHORIZED_FOR_USER,
  USER_READ_FORBIDDEN,
  PATH_400_CODES,
  SERVER_ERROR,
  adminOnly,
  errorAnswer,
  inPath,
  inQuery,
  jsonAnswer,
  limitParameter,
  mount,
  needsToken,
  operation,
  ref,
} from "./operations";

/** The user resource's operations: mounted below, described in Core's OpenAPI document. */
export const USER_OPERATIONS = {
  list: operation(
    "get",
    "/core/users",
    adminOnly({
      summary: "Every payer's non-empty balances, by user then asset, paginated (admin wallets)",
      parameters: [inQuery("asset", "Address"), limitParameter(500, 100), CURSOR_PARAMETER],
      responses: {
        "200": jsonAnswer("One page; `next_cursor` is null on the last.", ref("CollateralList")),
        "400": errorAnswer("`asset`, `limit` or `cursor` malformed or repeated.", ["invalid_request"]),
      },
    }),
  ),
  balances: operation(
    "get",
    "/core/users/{address}/balances",
    needsToken({
      tags: ["guarantees"],
      summary: "Core's view of a user's collateral per asset",
      parameters: [inPath("address", "Address")],
      responses: {
        "200": jsonAnswer("ETH, then the deployment's tokens, then other assets.", ref("Balances")),
        "400": errorAnswer("Malformed address.", ["invalid_request", ...PATH_400_CODES]),
        "403": USER_READ_FORBIDDEN,
        ...SERVER_ERROR,
      },
    }),
  ),
  withdrawals: operation(
    "get",
    "/core/users/{address}/withdrawals",
    needsToken({
      tags: ["clearing"],
      summary: "A user's withdrawals and what Core's books let it withdraw, per asset",
      parameters: [inPath("address", "Address")],
      responses: {
        "200": jsonAnswer("Withdrawable amounts and withdrawal requests.", ref("Withdrawals")),
        "400": errorAnswer("Malformed address.", ["invalid_request", ...PATH_400_CODES]),
        "403": USER_READ_FORBIDDEN,
        ...SERVER_ERROR,
      },
    }),
  ),
};
import { pathParam, queryParam, validate, validated } from "./validation";

export const DEFAULT_COLLATERAL_PAGE = 100;
export const MAX_COLLATERAL_PAGE = 500;

function parseCollateralPage(raw: string): number {
  const n = /^[0-9]{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_COLLATERAL_PAGE)) {
    throw new WireError("limit", `must be an integer from 1 to ${MAX_COLLATERAL_PAGE}`);
  }
  return n;
}

/** `cursor`: `<user>:<asset>` of the last row of the previous page (what `next_cursor` carries). */
function parseCollateralCursor(raw: string): { user: string; asset: string } {
  const [user, asset, ...more] = raw.split(":");
  if (asset === undefined || more.length > 0)
    throw new WireError("cursor", "is not a cursor this API issued");
  return { user: parseAddress(user, "cursor"), asset: parseAddress(asset, "cursor") };
}

const isoAt = (seconds: number) => new Date(seconds * 1000).toISOString();
const iso = (seconds: number | null) => (seconds === null ? null : isoAt(seconds));

export const userRoutes: RouteModule<StoreAreas<"collateral" | "reserves">> = (context) => {
  const { store, config, deployment } = context;
  const router = Router();
  const userParam = validate(pathParam("address", parseAddress));
  const authenticated = requireAccessToken(context.accessTokens);
  const isSelfOrFacilitator = (req: Request, address: string) => {
    const { wallet } = principalOf(req);
    return sameAddress(wallet, address) || isFacilitator(config, wallet) || isAdmin(config, wallet);
  };

  mount(
    router,
    USER_OPERATIONS.list,
    authenticated,
    ...validate(
      queryParam("asset", parseAddress),
      queryParam("limit", parseCollateralPage),
      queryParam("cursor", parseCollateralCursor),
    ),
    async (req, res) => {
      const { wallet } = principalOf(req);
      if (!isAdmin(config, wallet)) {
        throw forbidden("not_admin", `${wallet} is not an admin wallet (SURETY_ADMIN_WALLETS)`);
      }
      const query = validated<{ asset?: string; limit?: number; cursor?: { user: string; asset: string } }>(
        req,
      );
      const limit = query.limit ?? DEFAULT_COLLATERAL_PAGE;
      const rows = await store.collateral.listAllCollateral({
        after: query.cursor,
        asset: query.asset,
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      res.json({
        balances: page.map((b) => ({
          user_address: b.user,
          asset_address: b.asset,
          deposited: formatUint(b.deposited),
          locked: formatUint(b.locked),
          pending_withdrawal: formatUint(b.pendingWithdrawal),
        })),
        next_cursor: rows.length > limit ? `${last.user}:${last.asset}` : null,
      } satisfies CollateralList);
    },
  );

  mount(router, USER_OPERATIONS.balances, authenticated, ...userParam, async (req, res) => {
    const { address: user } = validated<{ address: string }>(req);
    if (!isSelfOrFacilitator(req, user)) {
      throw forbidden(
        NOT_AUTHORIZED_FOR_USER,
        "balances are visible to the user, facilitators and admin wallets only",
      );
    }
    // One snapshot: an indexed reserve event between the two reads would skew `available`.
    const [balances, reserves] = await store.transaction(async (tx) =>
      Promise.all([tx.collateral.listCollateral(user), tx.reserves.listReserves(user)]),
    );
    res.json(balancesView(config, deployment, user, balances, reserves));
  });

  mount(router, USER_OPERATIONS.withdrawals, authenticated, ...userParam, async (req, res) => {
    const { address: user } = validated<{ address: string }>(req);
    if (!isSelfOrFacilitator(req, user)) {
      throw forbidden(
        NOT_AUTHORIZED_FOR_USER,
        "withdrawals are visible to the user, facilitators and admin wallets only",
      );
    }
    const timings = context.timings.get();
    // One snapshot of withdrawals, balances and reserves (the indexer may apply events in between reads).
    const [withdrawals, balances, reserves] = await store.transaction(async (tx) =>
      Promise.all([
        tx.collateral.listWithdrawals(user),
        tx.collateral.listCollateral(user),
        tx.reserves.listReserves(user),
      ]),
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
        requested_at: isoAt(w.requestedAt),
        finalizable_at: isoAt(withdrawalReadyAt(w, timings)),
        paid: w.paid === null ? null : formatUint(w.paid),
        closed_at: iso(w.closedAt),
      })),
    } satisfies Withdrawals);
  });

  return router;
};
