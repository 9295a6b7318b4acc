/**
 * The guarantee resource (docs/operator-api.md; finalize: docs/operator-async.md). All require a bearer
 * token. Issuance authority is `canIssueFor`; reads are limited to the parties: a guarantee and its
 * timeline to its payer, its recipient, facilitators and admin wallets (anyone else gets the same 404 as
 * for an unknown id, so ids cannot be probed); a recipient's list to the recipient and facilitators (403
 * otherwise); the filtered list to a caller naming itself as payer or recipient, and to facilitators and
 * admin wallets with any filter (403 otherwise); the payer alone finalizes a V2 guarantee.
 */
import type { GuaranteeList, GuaranteeTimeline, RecipientGuarantees } from "../../sdk/api-guarantees";
import { type Request, type RequestHandler, Router } from "express";
import type { SignedGuarantee } from "../../sdk/claims";
import { WireError } from "../../sdk/errors";
import { parseAddress, parseBytes32, sameAddress } from "../../sdk/wire";
import { GUARANTEE_STATES, type GuaranteeState } from "../guarantees/states";
import type { StoredGuarantee } from "../store";
import { decodeCursor, encodeCursor, pageSize } from "../store/guarantee-paging";
import { forbidden, notFound } from "./errors";
import { pathParam, queryParam, validate, validated } from "./validation";
import type { RouteModule } from "./context";
import { isAdmin, isFacilitator } from "../auth";
import { principalOf, requireAccessToken } from "./access-middleware";
import { guaranteeTimeline, guaranteeView } from "../guarantees";
import { isoFromSeconds } from "../clock";
import { sendJson } from "../../runtime/json-answer";

function parseLimit(value: string): number {
  if (!/^[1-9][0-9]{0,5}$/.test(value)) throw new WireError("limit", "must be a positive integer");
  return Number(value);
}

function parseState(value: string): GuaranteeState {
  if (!(GUARANTEE_STATES as readonly string[]).includes(value)) {
    throw new WireError("state", `must be one of ${GUARANTEE_STATES.join(", ")}`);
  }
  return value as GuaranteeState;
}

const guaranteeIdParam = pathParam("id", parseBytes32);

/** `GET /core/guarantees?payer&recipient&state&asset&limit&cursor`. */
const guaranteeFilter = validate(
  queryParam("payer", parseAddress),
  queryParam("recipient", parseAddress),
  queryParam("state", parseState),
  queryParam("asset", parseAddress),
  queryParam("limit", parseLimit),
  queryParam("cursor", decodeCursor),
);

export const guaranteeRoutes: RouteModule = (context) => {
  const { store, config, issuer } = context;
  const router = Router();
  const authenticated = requireAccessToken(context.accessTokens);
  const isSelfOrFacilitator = (req: Request, address: string) => {
    const { wallet } = principalOf(req);
    return sameAddress(wallet, address) || isFacilitator(config, wallet);
  };

  /** The sdk's parser of a signed guarantee, as middleware: the parsed body in `res.locals.signedGuarantee`. */
  const signedGuarantee: RequestHandler = (req, res, next) => {
    res.locals.signedGuarantee = issuer.parseBody(req.body);
    next();
  };
  router.post("/core/guarantees", authenticated, signedGuarantee, async (req, res) => {
    const certificate = await issuer.issueSigned(
      principalOf(req),
      res.locals.signedGuarantee as SignedGuarantee,
    );
    // The hot route: res.json()'s bytes without Express's send path (runtime/json-answer.ts).
    sendJson(res, 200, certificate);
  });

  /** Facilitators and admin wallets read every guarantee; anyone else its own (as payer or recipient). */
  const readsAll = (req: Request) => {
    const { wallet } = principalOf(req);
    return isFacilitator(config, wallet) || isAdmin(config, wallet);
  };
  /** The guarantee `id` if the caller may read it; the same 404 as for an unknown id otherwise. */
  const visibleGuarantee = async (req: Request): Promise<StoredGuarantee> => {
    const { id } = validated<{ id: string }>(req);
    const record = await store.getGuarantee(id);
    const { wallet } = principalOf(req);
    const visible =
      record !== null &&
      (sameAddress(wallet, record.user) || sameAddress(wallet, record.recipient) || readsAll(req));
    if (!record || !visible) throw notFound("guarantee_not_found", `no guarantee ${id} visible to ${wallet}`);
    return record;
  };

  router.get("/core/guarantees", authenticated, ...guaranteeFilter, async (req, res) => {
    const filter = validated<{
      payer?: string;
      recipient?: string;
      state?: GuaranteeState;
      asset?: string;
      limit?: number;
      cursor?: number;
    }>(req);
    const { wallet } = principalOf(req);
    const own =
      (filter.payer !== undefined && sameAddress(filter.payer, wallet)) ||
      (filter.recipient !== undefined && sameAddress(filter.recipient, wallet));
    if (!own && !readsAll(req)) {
      throw forbidden(
        "not_authorized_for_guarantees",
        `give payer=${wallet} or recipient=${wallet}: other guarantees are visible to facilitators and admin wallets only`,
      );
    }
    const limit = pageSize(filter.limit);
    const rows = await store.listGuarantees({
      user: filter.payer,
      recipient: filter.recipient,
      states: filter.state === undefined ? undefined : [filter.state],
      asset: filter.asset,
      beforeSeq: filter.cursor,
      newestFirst: true,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    res.json({
      guarantees: page.map((item) => guaranteeView(item, config.chainId)),
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].seq) : null,
    } satisfies GuaranteeList);
  });

  router.get("/core/guarantees/:id", authenticated, ...validate(guaranteeIdParam), async (req, res) => {
    res.json(guaranteeView(await visibleGuarantee(req), config.chainId));
  });

  router.get(
    "/core/guarantees/:id/timeline",
    authenticated,
    ...validate(guaranteeIdParam),
    async (req, res) => {
      const record = await visibleGuarantee(req);
      // One snapshot: the indexer may settle the cycle between the reads.
      const steps = await store.transaction((tx) => guaranteeTimeline(tx, record, config.chainId));
      res.json({
        guarantee_id: record.guaranteeId,
        state: record.state,
        timeline: steps.map((step) => ({
          kind: step.kind,
          at: step.at === null ? null : isoFromSeconds(step.at),
          clock: step.clock,
          tx_hash: step.txHash,
          block_number: step.blockNumber,
          cycle_id: step.cycleId,
          detail: step.detail,
        })),
      } satisfies GuaranteeTimeline);
    },
  );

  router.post(
    "/core/guarantees/:id/finalize",
    authenticated,
    ...validate(guaranteeIdParam),
    async (req, res) => {
      const { id } = validated<{ id: string }>(req);
      // The body's `signature` is checked after the caller is known to be the payer (lifecycle).
      const body: unknown = req.body;
      const signature =
        typeof body === "object" && body !== null ? (body as { signature?: unknown }).signature : undefined;
      const finalized = await context.lifecycle.finalizeByPayer(id, principalOf(req).wallet, signature);
      res.json(guaranteeView(finalized, config.chainId));
    },
  );

  const recipientPage = validate(
    pathParam("address", parseAddress),
    queryParam("limit", parseLimit),
    queryParam("cursor", (value) => value),
  );
  router.get("/core/recipients/:address/guarantees", authenticated, ...recipientPage, async (req, res) => {
    const {
      address: recipient,
      limit,
      cursor,
    } = validated<{ address: string; limit?: number; cursor?: string }>(req);
    if (!isSelfOrFacilitator(req, recipient)) {
      throw forbidden(
        "not_authorized_for_recipient",
        "a recipient's guarantees are visible to the recipient and facilitators only",
      );
    }
    const page = await store.listGuaranteesByRecipient(recipient, {
      limit,
      cursor: cursor ?? null,
    });
    res.json({
      recipient_address: recipient,
      guarantees: page.items.map((item) => guaranteeView(item, config.chainId)),
      next_cursor: page.nextCursor,
    } satisfies RecipientGuarantees);
  });

  return router;
};
