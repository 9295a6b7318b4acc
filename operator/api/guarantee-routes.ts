/**
 * The guarantee resource (docs/operator-api.md; finalize: docs/operator-async.md). All require a bearer
 * token. Issuance authority is `canIssueFor`; reads are limited to the parties: a guarantee to its payer,
 * its recipient and facilitators (anyone else gets the same 404 as for an unknown id, so ids cannot be
 * probed); a recipient's list to the recipient and facilitators (403 otherwise); the payer alone
 * finalizes a V2 guarantee.
 */
import { type Request, type RequestHandler, Router } from "express";
import type { SignedGuarantee } from "../../sdk/claims";
import { WireError } from "../../sdk/errors";
import { parseAddress, parseBytes32, sameAddress } from "../../sdk/wire";
import { forbidden, notFound } from "./errors";
import { pathParam, queryParam, validate, validated } from "./validation";
import type { RouteModule } from "./context";
import { isFacilitator } from "../auth";
import { principalOf, requireAccessToken } from "./access-middleware";
import { guaranteeView } from "../guarantees";
import { sendJson } from "../../runtime/json-answer";

function parseLimit(value: string): number {
  if (!/^[1-9][0-9]{0,5}$/.test(value)) throw new WireError("limit", "must be a positive integer");
  return Number(value);
}

const guaranteeIdParam = pathParam("id", parseBytes32);

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

  router.get("/core/guarantees/:id", authenticated, ...validate(guaranteeIdParam), async (req, res) => {
    const { id } = validated<{ id: string }>(req);
    const record = await store.getGuarantee(id);
    const { wallet } = principalOf(req);
    const visible =
      record !== null &&
      (sameAddress(wallet, record.user) ||
        sameAddress(wallet, record.recipient) ||
        isFacilitator(config, wallet));
    if (!record || !visible) throw notFound("guarantee_not_found", `no guarantee ${id} visible to ${wallet}`);
    res.json(guaranteeView(record, config.chainId));
  });

  router.post(
    "/core/guarantees/:id/finalize",
    authenticated,
    ...validate(guaranteeIdParam),
    async (req, res) => {
      const { id } = validated<{ id: string }>(req);
      const finalized = await context.lifecycle.finalizeByPayer(id, principalOf(req).wallet);
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
    });
  });

  return router;
};
