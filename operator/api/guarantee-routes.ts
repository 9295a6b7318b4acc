/**
 * The guarantee resource (docs/operator-api.md; finalize: docs/operator-async.md). All require a bearer
 * token. Issuance authority is `canIssueFor`; reads are limited to the parties: a guarantee and its
 * timeline to its payer, its recipient, facilitators and admin wallets (anyone else gets the same 404 as
 * for an unknown id, so ids cannot be probed); a recipient's list to the recipient and facilitators (403
 * otherwise); the filtered list to a caller naming itself as payer or recipient, and to facilitators and
 * admin wallets with any filter (403 otherwise); the payer alone finalizes a V2 guarantee.
 */
import type {
  Certificate,
  GuaranteeList,
  GuaranteeTimeline,
  RecipientGuarantees,
} from "../../sdk/api-guarantees";
import { type Request, type RequestHandler, Router } from "express";
import type { SignedGuarantee } from "../../sdk/claims";
import { WireError } from "../../sdk/errors";
import { parseAddress, parseBytes32, sameAddress } from "../../sdk/wire";
import { GUARANTEE_STATES, type GuaranteeState } from "../guarantees/states";
import type { StoreAreas, StoredGuarantee } from "../store";
import { decodeCursor, encodeCursor, pageSize } from "../store/guarantee-paging";
import { forbidden, issuanceCodes, lifecycleCodes, notFound } from "./errors";
import { pathParam, queryParam, validate, validated } from "./validation";
import type { RouteModule } from "./context";
import { isAdmin, isFacilitator } from "../auth";
import { principalOf, requireAccessToken } from "./access-middleware";
import { guaranteeTimeline, guaranteeView, withCurrentCertificate } from "../guarantees";
import { isoFromSeconds } from "../clock";
import { sendJson } from "../../runtime/json-answer";
import {
  BODY_400_CODES,
  COMMON_ERRORS,
  CURSOR_PARAMETER,
  NOT_AUTHORIZED_FOR_GUARANTEES,
  PATH_400_CODES,
  SERVER_ERROR,
  errorAnswer,
  errorSchema,
  inPath,
  inQuery,
  jsonAnswer,
  jsonBody,
  limitParameter,
  mount,
  needsToken,
  operation,
  ref,
} from "./operations";

/** A guarantee unknown, or not visible to the caller: one answer for both, so ids cannot be probed. */
const GUARANTEE_NOT_FOUND = "guarantee_not_found";
/** A recipient's list read by someone else than the recipient or a facilitator. */
const NOT_AUTHORIZED_FOR_RECIPIENT = "not_authorized_for_recipient";
const GUARANTEE_ID_400 = errorAnswer("Malformed id.", ["invalid_request", ...PATH_400_CODES]);
const NOT_VISIBLE = errorAnswer("Unknown, or not visible to the caller.", [GUARANTEE_NOT_FOUND]);

/** The guarantee resource's operations: mounted below, described in Core's OpenAPI document. */
export const GUARANTEE_OPERATIONS = {
  issue: operation(
    "post",
    "/core/guarantees",
    needsToken({
      tags: ["guarantees"],
      summary: "Verify a payer-signed guarantee, lock collateral, return Core's BLS certificate",
      requestBody: jsonBody(ref("SignedGuaranteeRequest")),
      responses: {
        "200": jsonAnswer("Issued.", ref("Certificate")),
        "400": errorAnswer("Claims, policy, signature or collateral refused.", [
          ...issuanceCodes(400),
          ...BODY_400_CODES,
        ]),
        "403": errorAnswer("The caller may not issue for `recipient_address`.", issuanceCodes(403)),
        "409": jsonAnswer(
          "The guarantee identity (user, req_id) was issued before.",
          ref("DuplicateGuarantee"),
        ),
        ...COMMON_ERRORS,
        "500": {
          description:
            "Core could not issue the guarantee: an unexpected failure (`internal_error`, details in the log " +
            "only), or Core's books cannot follow the chain now (indexer halted by a deep reorg, stale, lagging " +
            "or starting), or (V2 only, `chain_time_unavailable`) Core has not indexed a block yet to judge the " +
            "validation deadline by, or the database is unavailable (`store_unavailable`), or the operator bond " +
            "is below the ClearingHouse floor (`commit_bond_*`), or the clearing commits owed might land after " +
            "the grace-period budget (`commit_deadline_at_risk`), or the issuance was shed by admission control " +
            "(`issuance_overloaded`, with `Retry-After`: this process already runs its bound of issuances at once, " +
            "`SURETY_ISSUANCE_MAX_IN_FLIGHT`, so covers, commits and lease renewals go first). Nothing is issued or " +
            "locked (for `store_unavailable`: unless the connection broke during the commit, which a retry of the " +
            "same body tells: 409 with the stored certificate); `GET /core/health` shows why; retry later.",
          content: {
            "application/json": {
              schema: {
                oneOf: [ref("InternalError"), ref("StoreUnavailable"), errorSchema(issuanceCodes(500))],
              },
            },
          },
        },
      },
    }),
  ),
  list: operation(
    "get",
    "/core/guarantees",
    needsToken({
      tags: ["guarantees"],
      summary: "Guarantees by payer, recipient, state and asset, newest first, paginated",
      description:
        "A caller sees the guarantees it is payer or recipient of (it must name itself in `payer` or " +
        "`recipient`); facilitators and admin wallets see all, with any filter.",
      parameters: [
        inQuery("payer", "Address"),
        inQuery("recipient", "Address"),
        inQuery("state", "GuaranteeState"),
        inQuery("asset", "Address"),
        limitParameter(500, 50),
        CURSOR_PARAMETER,
      ],
      responses: {
        "200": jsonAnswer("One page, newest first; `next_cursor` is null on the last.", ref("GuaranteeList")),
        "400": errorAnswer("A parameter malformed or repeated (the message names it).", ["invalid_request"]),
        "403": errorAnswer("The caller named neither itself as payer nor as recipient.", [
          NOT_AUTHORIZED_FOR_GUARANTEES,
        ]),
        ...SERVER_ERROR,
      },
    }),
  ),
  timeline: operation(
    "get",
    "/core/guarantees/{id}/timeline",
    needsToken({
      tags: ["guarantees"],
      summary:
        "What moved a guarantee, with the transactions (payer, recipient, facilitators, admin wallets)",
      parameters: [inPath("id", "Bytes32")],
      responses: {
        "200": jsonAnswer(
          "Its steps, oldest first; the last is the state it is in.",
          ref("GuaranteeTimeline"),
        ),
        "400": GUARANTEE_ID_400,
        "404": NOT_VISIBLE,
        ...SERVER_ERROR,
      },
    }),
  ),
  one: operation(
    "get",
    "/core/guarantees/{id}",
    needsToken({
      tags: ["guarantees"],
      summary: "One guarantee, visible to its payer, its recipient, facilitators and admin wallets",
      parameters: [inPath("id", "Bytes32")],
      responses: {
        "200": jsonAnswer("The guarantee.", ref("Guarantee")),
        "400": GUARANTEE_ID_400,
        "404": NOT_VISIBLE,
        ...SERVER_ERROR,
      },
    }),
  ),
  recipient: operation(
    "get",
    "/core/recipients/{address}/guarantees",
    needsToken({
      tags: ["guarantees"],
      summary: "A recipient's guarantees, oldest first, paginated",
      parameters: [inPath("address", "Address"), limitParameter(500, 50), CURSOR_PARAMETER],
      responses: {
        "200": jsonAnswer("One page; `next_cursor` is null on the last.", ref("RecipientGuarantees")),
        "400": errorAnswer("`limit`, `cursor` or `address` malformed.", [
          "invalid_request",
          ...PATH_400_CODES,
        ]),
        "403": errorAnswer("Only the recipient and facilitators may read.", [NOT_AUTHORIZED_FOR_RECIPIENT]),
        ...SERVER_ERROR,
      },
    }),
  ),
  finalize: operation(
    "post",
    "/core/guarantees/{id}/finalize",
    needsToken({
      tags: ["guarantees"],
      summary: "The payer finalizes its V2 guarantee (PENDING_VALIDATION or DISPUTED → FINALIZED_PAYABLE)",
      parameters: [inPath("id", "Bytes32")],
      requestBody: jsonBody(ref("FinalizeRequest")),
      responses: {
        "200": jsonAnswer("The guarantee, now FINALIZED_PAYABLE (enters the next cycle).", ref("Guarantee")),
        "400": errorAnswer(
          "Malformed id; malformed JSON body; `signature` missing or not the payer's Finalization signature.",
          ["invalid_request", ...lifecycleCodes(400), ...BODY_400_CODES, ...PATH_400_CODES],
        ),
        "403": errorAnswer("The caller is the recipient, not the payer.", lifecycleCodes(403)),
        "404": errorAnswer("Unknown, or the caller is neither payer nor recipient.", lifecycleCodes(404)),
        "409": errorAnswer("A V1 guarantee, or a V2 one in another state.", lifecycleCodes(409)),
        ...COMMON_ERRORS,
      },
    }),
  ),
};

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

export const guaranteeRoutes: RouteModule<StoreAreas<"cycles" | "guarantees" | "reserves">> = (context) => {
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
  mount(router, GUARANTEE_OPERATIONS.issue, authenticated, signedGuarantee, async (req, res) => {
    const certificate = await issuer.issueSigned(
      principalOf(req),
      res.locals.signedGuarantee as SignedGuarantee,
    );
    // The hot route: res.json()'s bytes without Express's send path (runtime/json-answer.ts).
    sendJson(res, 200, certificate satisfies Certificate);
  });

  /** Facilitators and admin wallets read every guarantee; anyone else its own (as payer or recipient). */
  const readsAll = (req: Request) => {
    const { wallet } = principalOf(req);
    return isFacilitator(config, wallet) || isAdmin(config, wallet);
  };
  /** The guarantee `id` if the caller may read it; the same 404 as for an unknown id otherwise. */
  const visibleGuarantee = async (req: Request): Promise<StoredGuarantee> => {
    const { id } = validated<{ id: string }>(req);
    const record = await store.guarantees.getGuarantee(id);
    const { wallet } = principalOf(req);
    const visible =
      record !== null &&
      (sameAddress(wallet, record.user) || sameAddress(wallet, record.recipient) || readsAll(req));
    if (!record || !visible) throw notFound(GUARANTEE_NOT_FOUND, `no guarantee ${id} visible to ${wallet}`);
    return record;
  };

  mount(router, GUARANTEE_OPERATIONS.list, authenticated, ...guaranteeFilter, async (req, res) => {
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
        NOT_AUTHORIZED_FOR_GUARANTEES,
        `give payer=${wallet} or recipient=${wallet}: other guarantees are visible to facilitators and admin wallets only`,
      );
    }
    const limit = pageSize(filter.limit);
    const rows = await store.guarantees.listGuarantees({
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

  mount(router, GUARANTEE_OPERATIONS.one, authenticated, ...validate(guaranteeIdParam), async (req, res) => {
    // Under Core's current key: a certificate stored before a key rotation no longer verifies on chain.
    res.json(
      await withCurrentCertificate(
        guaranteeView(await visibleGuarantee(req), config.chainId),
        context.signer,
      ),
    );
  });

  mount(
    router,
    GUARANTEE_OPERATIONS.timeline,
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

  mount(
    router,
    GUARANTEE_OPERATIONS.finalize,
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
  mount(router, GUARANTEE_OPERATIONS.recipient, authenticated, ...recipientPage, async (req, res) => {
    const {
      address: recipient,
      limit,
      cursor,
    } = validated<{ address: string; limit?: number; cursor?: string }>(req);
    if (!isSelfOrFacilitator(req, recipient)) {
      throw forbidden(
        NOT_AUTHORIZED_FOR_RECIPIENT,
        "a recipient's guarantees are visible to the recipient and facilitators only",
      );
    }
    const page = await store.guarantees.listGuaranteesByRecipient(recipient, {
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
