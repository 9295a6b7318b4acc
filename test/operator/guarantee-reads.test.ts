import { expect } from "chai";
import { parseValidationPolicy } from "../../sdk/claims";
import { guaranteeId, validationRequestHash } from "../../sdk/ids";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { request, signIn, startTestCore, T0, TEST_CHAIN_ID, TEST_DEPLOYMENT, type TestCore } from "./helpers";
import {
  bearer,
  facilitator,
  issue,
  payer,
  recipient,
  signedBody,
  stranger,
  TETH,
  TUSD,
  v1Claims,
  v2Claims,
} from "./guarantee-fixtures";

const IDS = { chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault };

describe("Core read endpoints", () => {
  let t: TestCore;
  let url: string;
  const tokens: Record<string, string> = {};

  beforeEach(async () => {
    t = await startTestCore({ facilitators: [facilitator.address], collateralFactorsBps: { [TETH]: 5_000 } });
    url = t.core.url;
    for (const wallet of [payer, recipient, facilitator, stranger]) {
      tokens[wallet.address] = (await signIn(url, wallet)).access_token;
    }
  });

  afterEach(async () => {
    await t.stop();
  });

  const get = (path: string, wallet?: { address: string }) =>
    request(url, "GET", path, { headers: wallet ? bearer(tokens[wallet.address]) : {} });

  describe("GET /core/guarantees/:id", () => {
    it("200 for payer, recipient and facilitators: state, wire claims, certificate, timestamps", async () => {
      await t.core.context.store.creditDeposit(payer.address, TUSD, 5_000n, T0);
      const body = await signedBody(v2Claims({ asset: TUSD, reqId: 0x10n }), "eip191");
      const certificate = (await issue(url, tokens[recipient.address], body)).body;
      const id = guaranteeId(IDS, payer.address, 0x10n).toLowerCase();
      for (const reader of [payer, recipient, facilitator]) {
        const response = await get(`/core/guarantees/${id}`, reader);
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        expect(response.body).to.deep.equal({
          guarantee_id: id,
          state: "PENDING_VALIDATION",
          claims: body.claims,
          scheme: "eip191",
          signature: body.signature,
          certificate,
          created_at: new Date(T0 * 1000).toISOString(),
          updated_at: new Date(T0 * 1000).toISOString(),
          cycle_id: null,
          excluded_reason: null,
          validation_request_hash: validationRequestHash(
            TEST_CHAIN_ID,
            parseValidationPolicy(body.claims.validation_policy, "policy"),
            id,
          ),
        });
      }
      // Any case of the id.
      expect((await get(`/core/guarantees/${id.toUpperCase().replace("0X", "0x")}`, payer)).status).to.equal(
        200,
      );
    });

    it("404 for an unknown id and, alike, for a wallet that is not a party", async () => {
      await t.core.context.store.creditDeposit(payer.address, ZERO_ADDRESS, 5_000n, T0);
      await issue(url, tokens[recipient.address], await signedBody(v1Claims()));
      const id = guaranteeId(IDS, payer.address, 1n);
      expect((await get(`/core/guarantees/${id}`, payer)).body).to.include({
        guarantee_id: id,
        validation_request_hash: null, // V1
      });
      const hidden = await get(`/core/guarantees/${id}`, stranger);
      const unknown = await get(`/core/guarantees/0x${"00".repeat(32)}`, payer);
      for (const response of [hidden, unknown]) {
        expect(response.status).to.equal(404);
        expect(response.body.code).to.equal("guarantee_not_found");
      }
    });

    it("400 for a malformed id, 401 without a token", async () => {
      const malformed = await get("/core/guarantees/0x1234", payer);
      expect(malformed.status).to.equal(400);
      expect(malformed.body.error).to.match(/^id: /);
      expect((await get(`/core/guarantees/0x${"00".repeat(32)}`)).status).to.equal(401);
    });
  });

  describe("GET /core/users/:address/balances", () => {
    it("200: every asset with deposited, locked, pending_withdrawal, reserve_hold and available as decimal strings", async () => {
      const store = t.core.context.store;
      await store.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
      await store.creditDeposit(payer.address, TETH, 2n ** 200n, T0);
      await store.setPendingWithdrawal(payer.address, ZERO_ADDRESS, 3_000n, T0);
      await issue(url, tokens[recipient.address], await signedBody(v1Claims({ amount: 2_500n })));
      const response = await get(`/core/users/${payer.address.toLowerCase()}/balances`, payer);
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(response.body.user_address).to.equal(payer.address);
      expect(response.body.balances).to.deep.equal([
        {
          asset_address: ZERO_ADDRESS,
          symbol: "ETH",
          decimals: 18,
          deposited: "10000",
          locked: "2500",
          pending_withdrawal: "3000",
          reserve_hold: "0",
          available: "4500",
          collateral_factor_bps: 10_000,
        },
        {
          asset_address: TUSD,
          symbol: "tUSD",
          decimals: 6,
          deposited: "0",
          locked: "0",
          pending_withdrawal: "0",
          reserve_hold: "0",
          available: "0",
          collateral_factor_bps: 10_000,
        },
        {
          asset_address: TETH,
          symbol: "tETH",
          decimals: 18,
          deposited: (2n ** 200n).toString(),
          locked: "0",
          pending_withdrawal: "0",
          reserve_hold: "0",
          available: (2n ** 199n).toString(),
          collateral_factor_bps: 5_000,
        },
      ]);
    });

    it("visible to the user and facilitators; 403 for others; 401 without a token; 400 bad address", async () => {
      expect((await get(`/core/users/${payer.address}/balances`, facilitator)).status).to.equal(200);
      const other = await get(`/core/users/${payer.address}/balances`, stranger);
      expect(other.status).to.equal(403);
      expect(other.body.code).to.equal("not_authorized_for_user");
      expect((await get(`/core/users/${payer.address}/balances`)).status).to.equal(401);
      const bad = await get("/core/users/0x12/balances", payer);
      expect(bad.status).to.equal(400);
      expect(bad.body.error).to.match(/^address: /);
    });
  });

  describe("GET /core/recipients/:address/guarantees", () => {
    it("pages oldest first with next_cursor until null", async () => {
      await t.core.context.store.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
      for (let n = 1n; n <= 5n; n++) {
        const response = await issue(
          url,
          tokens[recipient.address],
          await signedBody(v1Claims({ reqId: n })),
        );
        expect(response.status).to.equal(200);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `?limit=2&cursor=${cursor}` : "?limit=2";
        const response = await get(`/core/recipients/${recipient.address}/guarantees${query}`, recipient);
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        expect(response.body.recipient_address).to.equal(recipient.address);
        expect(response.body.guarantees.length).to.be.at.most(2);
        seen.push(...response.body.guarantees.map((g: { claims: { req_id: string } }) => g.claims.req_id));
        cursor = response.body.next_cursor;
        pages++;
      } while (cursor !== null);
      expect(seen).to.deep.equal(["1", "2", "3", "4", "5"]);
      expect(pages).to.equal(3);
      const all = await get(`/core/recipients/${recipient.address}/guarantees`, facilitator);
      expect(all.body.guarantees).to.have.length(5);
      expect(all.body.next_cursor).to.equal(null);
      expect(all.body.guarantees[0].state).to.equal("FINALIZED_PAYABLE");
    });

    it("400 for bad limit or cursor; 403 for others; 401 without a token", async () => {
      const base = `/core/recipients/${recipient.address}/guarantees`;
      for (const [query, field] of [
        ["?limit=0", "limit"],
        ["?limit=abc", "limit"],
        ["?limit=501", "limit"],
        ["?cursor=bm9wZQ", "cursor"],
        ["?limit=1&limit=2", "limit"],
      ]) {
        const response = await get(base + query, recipient);
        expect(response.status, query).to.equal(400);
        expect(response.body.error).to.match(new RegExp(`^${field}: `));
      }
      const other = await get(base, stranger);
      expect(other.status).to.equal(403);
      expect(other.body.code).to.equal("not_authorized_for_recipient");
      expect((await get(base)).status).to.equal(401);
    });
  });
});
