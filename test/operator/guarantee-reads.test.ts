import { expect } from "chai";
import { parseValidationPolicy } from "../../sdk/claims";
import { guaranteeId, validationRequestHash } from "../../sdk/ids";
import { Wallet } from "ethers";
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
/** In `SURETY_ADMIN_WALLETS` (the console's admin): reads every guarantee and balance. */
const admin = new Wallet("0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a");

describe("Core read endpoints", () => {
  let t: TestCore;
  let url: string;
  const tokens: Record<string, string> = {};

  beforeEach(async () => {
    t = await startTestCore({
      facilitators: [facilitator.address],
      collateralFactorsBps: { [TETH]: 5_000 },
      adminWallets: admin.address,
    });
    url = t.core.url;
    for (const wallet of [payer, recipient, facilitator, stranger, admin]) {
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
      await t.core.context.store.collateral.creditDeposit(payer.address, TUSD, 5_000n, T0);
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
          finalization_signature: null,
        });
      }
      // Any case of the id.
      expect((await get(`/core/guarantees/${id.toUpperCase().replace("0X", "0x")}`, payer)).status).to.equal(
        200,
      );
    });

    it("404 for an unknown id and, alike, for a wallet that is not a party", async () => {
      await t.core.context.store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 5_000n, T0);
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
      await store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
      await store.collateral.creditDeposit(payer.address, TETH, 2n ** 200n, T0);
      await store.collateral.setPendingWithdrawal(payer.address, ZERO_ADDRESS, 3_000n, T0);
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

    it("visible to the user, facilitators and admin wallets; 403 for others; 401 without a token; 400 bad address", async () => {
      expect((await get(`/core/users/${payer.address}/balances`, facilitator)).status).to.equal(200);
      expect((await get(`/core/users/${payer.address}/balances`, admin)).status).to.equal(200);
      expect((await get(`/core/users/${payer.address}/withdrawals`, admin)).status).to.equal(200);
      expect((await get(`/core/users/${payer.address}/withdrawals`, stranger)).status).to.equal(403);
      const other = await get(`/core/users/${payer.address}/balances`, stranger);
      expect(other.status).to.equal(403);
      expect(other.body.code).to.equal("not_authorized_for_user");
      expect((await get(`/core/users/${payer.address}/balances`)).status).to.equal(401);
      const bad = await get("/core/users/0x12/balances", payer);
      expect(bad.status).to.equal(400);
      expect(bad.body.error).to.match(/^address: /);
    });
  });

  describe("GET /core/guarantees?payer&recipient&state&asset (and the timeline)", () => {
    /** Three guarantees: two of payer's (tUSD, ETH) to recipient, one of stranger's to recipient. */
    async function issueThree() {
      const store = t.core.context.store;
      await store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
      await store.collateral.creditDeposit(payer.address, TUSD, 10_000n, T0);
      await store.collateral.creditDeposit(stranger.address, ZERO_ADDRESS, 10_000n, T0);
      const token = tokens[recipient.address];
      expect(
        (await issue(url, token, await signedBody(v1Claims({ reqId: 1n, asset: TUSD })))).status,
      ).to.equal(200);
      expect((await issue(url, token, await signedBody(v1Claims({ reqId: 2n })))).status).to.equal(200);
      const strangers = await signedBody(v1Claims({ reqId: 3n, user: stranger.address }), "eip712", stranger);
      expect((await issue(url, token, strangers)).status).to.equal(200);
    }
    const reqIds = (body: { guarantees: { claims: { req_id: string } }[] }) =>
      body.guarantees.map((g) => g.claims.req_id);

    it("a party sees its own, newest first, filtered by state and asset, paged", async () => {
      await issueThree();
      const own = await get(`/core/guarantees?payer=${payer.address}`, payer);
      expect(own.status, JSON.stringify(own.body)).to.equal(200);
      expect(reqIds(own.body)).to.deep.equal(["2", "1"]);
      expect(
        reqIds((await get(`/core/guarantees?recipient=${recipient.address}`, recipient)).body),
      ).to.deep.equal(["3", "2", "1"]);
      expect(
        reqIds((await get(`/core/guarantees?payer=${payer.address}&asset=${TUSD}`, payer)).body),
      ).to.deep.equal(["1"]);
      expect(
        reqIds((await get(`/core/guarantees?payer=${payer.address}&state=NETTED`, payer)).body),
      ).to.deep.equal([]);
      const first = await get(`/core/guarantees?recipient=${recipient.address}&limit=2`, recipient);
      expect(reqIds(first.body)).to.deep.equal(["3", "2"]);
      const second = await get(
        `/core/guarantees?recipient=${recipient.address}&limit=2&cursor=${first.body.next_cursor}`,
        recipient,
      );
      expect(reqIds(second.body)).to.deep.equal(["1"]);
      expect(second.body.next_cursor).to.equal(null);
    });

    it("a payer cannot read another payer's guarantees; admin wallets and facilitators read all", async () => {
      await issueThree();
      for (const query of [`payer=${payer.address}`, `recipient=${recipient.address}`, "", `asset=${TUSD}`]) {
        const refused = await get(`/core/guarantees?${query}`, stranger);
        expect(refused.status, query).to.equal(403);
        expect(refused.body.code).to.equal("not_authorized_for_guarantees");
      }
      // Naming itself is not a way around: payer=self and recipient=other lists only its own.
      const own = await get(
        `/core/guarantees?payer=${stranger.address}&recipient=${recipient.address}`,
        stranger,
      );
      expect(reqIds(own.body)).to.deep.equal(["3"]);
      expect((await get(`/core/guarantees?payer=${payer.address}`, recipient)).status).to.equal(403);
      expect(reqIds((await get("/core/guarantees", admin)).body)).to.deep.equal(["3", "2", "1"]);
      expect(reqIds((await get(`/core/guarantees?payer=${payer.address}`, facilitator)).body)).to.deep.equal([
        "2",
        "1",
      ]);
      expect((await get("/core/guarantees")).status).to.equal(401);
    });

    it("400 names the malformed or repeated parameter", async () => {
      for (const [query, field] of [
        ["payer=0x12", "payer"],
        ["recipient=nope", "recipient"],
        ["state=netted", "state"],
        ["asset=0x", "asset"],
        ["limit=0", "limit"],
        ["cursor=bm9wZQ", "cursor"],
        [`payer=${payer.address}&payer=${payer.address}`, "payer"],
      ]) {
        const response = await get(`/core/guarantees?${query}`, admin);
        expect(response.status, query).to.equal(400);
        expect(response.body.error, query).to.match(new RegExp(`^${field}: `));
      }
    });

    it("the timeline: to the parties and admin wallets, 404 to others", async () => {
      await issueThree();
      const id = guaranteeId(IDS, payer.address, 2n).toLowerCase();
      for (const reader of [payer, recipient, admin, facilitator]) {
        const response = await get(`/core/guarantees/${id}/timeline`, reader);
        expect(response.status).to.equal(200);
        expect(response.body).to.deep.equal({
          guarantee_id: id,
          state: "FINALIZED_PAYABLE",
          timeline: [
            {
              kind: "issued",
              at: new Date(T0 * 1000).toISOString(),
              clock: "core",
              tx_hash: null,
              block_number: null,
              cycle_id: null,
              detail: { amount: "1000", version: 1 },
            },
            {
              kind: "state",
              at: new Date(T0 * 1000).toISOString(),
              clock: "core",
              tx_hash: null,
              block_number: null,
              cycle_id: null,
              detail: { state: "FINALIZED_PAYABLE" },
            },
          ],
        });
      }
      expect((await get(`/core/guarantees/${id}/timeline`, stranger)).body.code).to.equal(
        "guarantee_not_found",
      );
      expect((await get(`/core/guarantees/${id}`, admin)).status).to.equal(200);
    });
  });

  describe("GET /core/users (admin wallets)", () => {
    it("pages every non-empty balance by user then asset; 403 for anyone else, facilitators too", async () => {
      const store = t.core.context.store;
      await store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
      await store.collateral.creditDeposit(payer.address, TUSD, 7n, T0);
      await store.collateral.creditDeposit(stranger.address, TUSD, 5n, T0);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `?limit=2&cursor=${cursor}` : "?limit=2";
        const page = await get(`/core/users${query}`, admin);
        expect(page.status, JSON.stringify(page.body)).to.equal(200);
        seen.push(
          ...page.body.balances.map(
            (b: { user_address: string; asset_address: string; deposited: string }) =>
              `${b.user_address}/${b.asset_address}/${b.deposited}`,
          ),
        );
        cursor = page.body.next_cursor;
      } while (cursor !== null);
      expect(seen).to.have.members([
        `${payer.address}/${ZERO_ADDRESS}/10000`,
        `${payer.address}/${TUSD}/7`,
        `${stranger.address}/${TUSD}/5`,
      ]);
      const tusd = await get(`/core/users?asset=${TUSD}`, admin);
      expect(tusd.body.balances).to.have.length(2);
      for (const reader of [payer, facilitator, stranger]) {
        const refused = await get("/core/users", reader);
        expect(refused.status).to.equal(403);
        expect(refused.body.code).to.equal("not_admin");
      }
      for (const [query, field] of [
        ["limit=0", "limit"],
        ["limit=501", "limit"],
        ["cursor=0x12:0x34", "cursor"],
        ["asset=eth", "asset"],
      ]) {
        const bad = await get(`/core/users?${query}`, admin);
        expect(bad.status, query).to.equal(400);
        expect(bad.body.error, query).to.match(new RegExp(`^${field}: `));
      }
    });
  });

  describe("GET /core/recipients/:address/guarantees", () => {
    it("pages oldest first with next_cursor until null", async () => {
      await t.core.context.store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
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
