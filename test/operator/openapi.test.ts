/**
 * Core's OpenAPI document against Core itself: a real Core (deployed contracts, SQLite store, real
 * signatures) is called on every documented endpoint, for successes and failures, and each answer's body
 * is validated against the document's schema for that path and status.
 */
import { signFinalization } from "../../sdk/finalization";
import { expect } from "chai";
import { Wallet } from "ethers";
import { ethers } from "hardhat";
import { CORE_OPENAPI } from "../../operator/api/openapi-document";
import { createBackgroundTasks } from "../../operator/background";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { createWebhookDispatcher } from "../../operator/webhooks";
import { guaranteeId } from "../../sdk/ids";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { OpenApiChecker } from "../openapi/validator";
import {
  bearer,
  facilitator,
  issue,
  payer,
  recipient,
  signedBody,
  stranger,
  v1Claims,
  v2Claims,
} from "./guarantee-fixtures";
import {
  post,
  request,
  signIn,
  siweMessageFor,
  startTestCore,
  T0,
  TEST_CHAIN_ID,
  TEST_DEPLOYER_KEY,
  TEST_DEPLOYMENT,
  type TestCore,
} from "./helpers";
import { RECEIVER_SECRET, WebhookReceiver } from "./webhook-receiver";

/** In `adminWallets`: may call `/core/admin/*`. */
const admin = new Wallet("0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a");
const CONFIGURED_WEBHOOK = "openapi-hook";

describe("Core OpenAPI document", () => {
  const checker = new OpenApiChecker(CORE_OPENAPI);
  let t: TestCore;
  let url: string;
  let receiver: WebhookReceiver;

  before(async () => {
    // A real receiver behind a configured subscription: every guarantee issued below writes a
    // `guarantee.issued` delivery for the admin deliveries endpoint to show.
    receiver = await WebhookReceiver.start({ now: () => t?.clock.nowSeconds() ?? T0 });
    // The deployer holds the ClearingHouse operator role: Core commits cycles with it. No background
    // loop: the tests drive the indexer, scheduler and webhook dispatcher by hand.
    t = await startTestCore({
      facilitators: [facilitator.address],
      operatorPrivateKey: TEST_DEPLOYER_KEY,
      backgroundTasks: false,
      // Tasks driven by hand (below): no wall-clock staleness bound on a loaded machine.
      indexerMaxStaleSeconds: 86_400,
      adminWallets: admin.address,
      webhooks: JSON.stringify([
        {
          id: CONFIGURED_WEBHOOK,
          url: receiver.url,
          secret: RECEIVER_SECRET,
          event_types: ["guarantee.issued"],
        },
      ]),
    });
    url = t.core.url;
    await t.core.context.store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
  });

  after(async () => {
    await t?.stop();
    await receiver?.close();
  });

  async function call(
    method: string,
    template: string,
    path: string,
    options: Parameters<typeof request>[3] = {},
  ) {
    const response = await request(url, method, path, options);
    checker.check(method, template, response);
    return response;
  }

  it("compiles: every $ref resolves and every schema is valid JSON Schema 2020-12", () => {
    expect(checker.compileAll()).to.be.greaterThan(40);
  });

  it("is served at GET /openapi.json", async () => {
    const response = await call("GET", "/openapi.json", "/openapi.json");
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal(JSON.parse(JSON.stringify(CORE_OPENAPI)));
    expect(response.body.openapi).to.equal("3.1.0");
  });

  it("public endpoints match", async () => {
    expect((await call("GET", "/core/tokens", "/core/tokens")).status).to.equal(200);
    expect((await call("GET", "/core/public-params", "/core/public-params")).status).to.equal(200);
    expect((await call("GET", "/core/health", "/core/health")).status).to.equal(200);
    const metrics = await call("GET", "/metrics", "/metrics");
    expect(metrics.status).to.equal(200);
    expect(metrics.body).to.contain("surety_http_requests_total");
  });

  it("auth endpoints match, success and failure", async () => {
    expect((await call("POST", "/auth/nonce", "/auth/nonce", { json: { address: "0x12" } })).status).to.equal(
      400,
    );
    const malformed = await call("POST", "/auth/nonce", "/auth/nonce", { rawBody: "{" });
    expect(malformed.body.code).to.equal("malformed_json");
    const undecodable = await call("POST", "/auth/nonce", "/auth/nonce", {
      rawBody: "{}",
      headers: { "content-encoding": "gzip" },
    });
    expect(undecodable.body.code).to.equal("undecodable_body");
    const unsupported = await call("POST", "/auth/nonce", "/auth/nonce", {
      rawBody: "{}",
      headers: { "content-encoding": "zstd" },
    });
    expect(unsupported.status).to.equal(415);
    expect(unsupported.body.code).to.equal("unsupported_encoding");
    const tooLarge = await call("POST", "/auth/nonce", "/auth/nonce", {
      json: { address: payer.address, padding: "x".repeat(70_000) },
    });
    expect(tooLarge.status).to.equal(413);

    const nonce = await call("POST", "/auth/nonce", "/auth/nonce", { json: { address: recipient.address } });
    expect(nonce.status).to.equal(200);
    const message = siweMessageFor(recipient.address, nonce.body);
    const badSignature = await stranger.signMessage(message);
    const refused = await call("POST", "/auth/verify", "/auth/verify", {
      json: { address: recipient.address, message, signature: badSignature },
    });
    expect(refused.status).to.equal(401);
    expect(
      (await call("POST", "/auth/verify", "/auth/verify", { json: { address: recipient.address } })).status,
    ).to.equal(400);
    const signature = await recipient.signMessage(message);
    const tokens = await call("POST", "/auth/verify", "/auth/verify", {
      json: { address: recipient.address, message, signature },
    });
    expect(tokens.status).to.equal(200);

    const refreshed = await call("POST", "/auth/refresh", "/auth/refresh", {
      json: { refresh_token: tokens.body.refresh_token },
    });
    expect(refreshed.status).to.equal(200);
    const reused = await call("POST", "/auth/refresh", "/auth/refresh", {
      json: { refresh_token: tokens.body.refresh_token },
    });
    expect(reused.status).to.equal(401);
    expect((await call("POST", "/auth/refresh", "/auth/refresh", { json: {} })).status).to.equal(400);
    expect(
      (
        await call("POST", "/auth/logout", "/auth/logout", {
          json: { refresh_token: refreshed.body.refresh_token },
        })
      ).status,
    ).to.equal(204);
    expect(
      (await call("POST", "/auth/logout", "/auth/logout", { json: { refresh_token: 7 } })).status,
    ).to.equal(400);
  });

  it("guarantee endpoints match, success and failure", async () => {
    const recipientToken = (await signIn(url, recipient)).access_token;
    const strangerToken = (await signIn(url, stranger)).access_token;
    const facilitatorToken = (await signIn(url, facilitator)).access_token;
    const body = await signedBody(v1Claims({ reqId: 4242n, amount: 1_000n }));

    const missing = await request(url, "POST", "/core/guarantees", { json: body });
    checker.check("POST", "/core/guarantees", missing);
    expect(missing.status).to.equal(401);
    expect(missing.headers.get("www-authenticate")).to.match(/^Bearer/);

    const invalid = await issue(url, recipientToken, { ...body, scheme: "rsa" });
    checker.check("POST", "/core/guarantees", invalid);
    expect(invalid.status).to.equal(400);
    const forbidden = await issue(url, strangerToken, body);
    checker.check("POST", "/core/guarantees", forbidden);
    expect(forbidden.status).to.equal(403);
    const tooMuch = await issue(
      url,
      recipientToken,
      await signedBody(v1Claims({ reqId: 1n, amount: 10_001n })),
    );
    checker.check("POST", "/core/guarantees", tooMuch);
    expect(tooMuch.body.code).to.equal("insufficient_collateral");

    const issued = await issue(url, recipientToken, body);
    checker.check("POST", "/core/guarantees", issued);
    expect(issued.status).to.equal(200);
    const duplicate = await issue(url, facilitatorToken, body);
    checker.check("POST", "/core/guarantees", duplicate);
    expect(duplicate.status).to.equal(409);
    expect(duplicate.body.certificate).to.deep.equal(issued.body);

    const id = guaranteeId({ chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault }, payer.address, 4242n);
    const one = "/core/guarantees/{id}";
    expect(
      (await call("GET", one, `/core/guarantees/${id}`, { headers: bearer(recipientToken) })).status,
    ).to.equal(200);
    expect(
      (await call("GET", one, "/core/guarantees/0x12", { headers: bearer(recipientToken) })).status,
    ).to.equal(400);
    const malformedPath = await call("GET", one, "/core/guarantees/%ff", { headers: bearer(recipientToken) });
    expect(malformedPath.status).to.equal(400);
    expect(malformedPath.body.code).to.equal("malformed_path");
    expect(
      (await call("GET", one, `/core/guarantees/${id}`, { headers: bearer(strangerToken) })).status,
    ).to.equal(404);
    expect((await call("GET", one, `/core/guarantees/${id}`)).status).to.equal(401);

    const balances = "/core/users/{address}/balances";
    const own = await call("GET", balances, `/core/users/${payer.address}/balances`, {
      headers: bearer(facilitatorToken),
    });
    expect(own.status).to.equal(200);
    expect(own.body.balances[0].locked).to.equal("1000");
    expect(
      (await call("GET", balances, "/core/users/nope/balances", { headers: bearer(strangerToken) })).status,
    ).to.equal(400);
    expect(
      (
        await call("GET", balances, `/core/users/${payer.address}/balances`, {
          headers: bearer(strangerToken),
        })
      ).status,
    ).to.equal(403);

    const list = "/core/recipients/{address}/guarantees";
    const page = await call("GET", list, `/core/recipients/${recipient.address}/guarantees?limit=1`, {
      headers: bearer(recipientToken),
    });
    expect(page.status).to.equal(200);
    expect(page.body.guarantees).to.have.length(1);
    expect(
      (
        await call("GET", list, `/core/recipients/${recipient.address}/guarantees?limit=0`, {
          headers: bearer(recipientToken),
        })
      ).status,
    ).to.equal(400);
    expect(
      (
        await call("GET", list, `/core/recipients/${recipient.address}/guarantees`, {
          headers: bearer(strangerToken),
        })
      ).status,
    ).to.equal(403);
  });

  it("V2 finalization, cycle, proof and withdrawal endpoints match, success and failure", async () => {
    // Real chain activity for Core's indexer and scheduler (driven by hand here, no background loop).
    const tasks = await createBackgroundTasks({ ...t.core.context, provider: ethers.provider });
    const onChainPayer = new Wallet(payer.privateKey, ethers.provider);
    const vault = t.contracts.surety.vault.connect(onChainPayer);
    await (await vault.deposit({ value: 5_000n })).wait();
    await tasks.indexer.tick();

    const payerToken = (await signIn(url, payer)).access_token;
    const recipientToken = (await signIn(url, recipient)).access_token;
    const strangerToken = (await signIn(url, stranger)).access_token;
    const v2 = await signedBody(v2Claims({ reqId: 4343n, amount: 500n }, { deadline: T0 + 100 }));
    expect((await issue(url, recipientToken, v2)).status).to.equal(200);
    const v2Id = guaranteeId({ chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault }, payer.address, 4343n);
    const v1Id = guaranteeId({ chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault }, payer.address, 4242n);

    const finalize = "/core/guarantees/{id}/finalize";
    const as = (token: string) => ({ headers: bearer(token) });
    expect((await call("POST", finalize, `/core/guarantees/${v2Id}/finalize`)).status).to.equal(401);
    expect(
      (await call("POST", finalize, "/core/guarantees/0x12/finalize", as(payerToken))).body.code,
    ).to.equal("invalid_request");
    expect(
      (await call("POST", finalize, `/core/guarantees/${v2Id}/finalize`, as(strangerToken))).body.code,
    ).to.equal("guarantee_not_found");
    expect(
      (await call("POST", finalize, `/core/guarantees/${v2Id}/finalize`, as(recipientToken))).body.code,
    ).to.equal("not_payer");
    expect(
      (await call("POST", finalize, `/core/guarantees/${v1Id}/finalize`, as(payerToken))).body.code,
    ).to.equal("invalid_state");
    expect(
      (await call("POST", finalize, `/core/guarantees/${v2Id}/finalize`, as(payerToken))).body.code,
    ).to.equal("invalid_finalization_signature");
    const signature = await signFinalization(payer, t.core.context.hasher, v2Id);
    const finalized = await call("POST", finalize, `/core/guarantees/${v2Id}/finalize`, {
      ...as(payerToken),
      json: { signature },
    });
    expect(finalized.status).to.equal(200);
    expect(finalized.body).to.include({ guarantee_id: v2Id, state: "FINALIZED_PAYABLE" });
    expect(
      (
        await call("POST", finalize, `/core/guarantees/${v2Id}/finalize`, {
          ...as(payerToken),
          json: { signature },
        })
      ).status,
    ).to.equal(409);

    // Cycle 1 nets both guarantees (payer owes the recipient 1,500), commits on chain, and is indexed.
    await t.core.context.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(t.clock.nowSeconds()));
    expect(await tasks.scheduler!.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 2 });
    await tasks.indexer.tick();

    const cycle = "/core/cycles/{id}";
    const one = await call("GET", cycle, "/core/cycles/1");
    expect(one.status).to.equal(200);
    expect(one.body).to.include({ cycle_id: 1, state: "COMMITTED", guarantee_count: 2 });
    expect(one.body.debtors).to.deep.equal([
      { asset_address: ZERO_ADDRESS, debtor: payer.address, amount: "1500", status: "OPEN", covered: null },
    ]);
    expect((await call("GET", cycle, "/core/cycles/2")).body.code).to.equal("cycle_not_found");
    expect((await call("GET", cycle, "/core/cycles/x")).body.code).to.equal("invalid_request");

    // The cycle list, the schedule, the filtered guarantee list and a guarantee's timeline.
    const cycles = await call("GET", "/core/cycles", "/core/cycles?limit=5");
    expect(cycles.body.cycles.map((c: { cycle_id: number }) => c.cycle_id)).to.deep.equal([1]);
    expect(cycles.body.next_cursor).to.equal(null);
    expect((await call("GET", "/core/cycles", "/core/cycles?before=1")).body.cycles).to.deep.equal([]);
    expect((await call("GET", "/core/cycles", "/core/cycles?limit=51")).body.code).to.equal(
      "invalid_request",
    );
    const schedule = await call("GET", "/core/clearing/schedule", "/core/clearing/schedule");
    expect(schedule.status).to.equal(200);
    expect(schedule.body).to.include({ latest_committed_cycle_id: 1, pending_cycle: null });
    const list = "/core/guarantees";
    const mine = await call(
      "GET",
      list,
      `/core/guarantees?payer=${payer.address}&state=NETTED`,
      as(payerToken),
    );
    expect(mine.status).to.equal(200);
    expect(mine.body.guarantees.map((g: { guarantee_id: string }) => g.guarantee_id)).to.have.members([
      v1Id.toLowerCase(),
      v2Id.toLowerCase(),
    ]);
    expect((await call("GET", list, `/core/guarantees?payer=${payer.address}`)).status).to.equal(401);
    expect(
      (await call("GET", list, `/core/guarantees?payer=${payer.address}`, as(strangerToken))).body.code,
    ).to.equal("not_authorized_for_guarantees");
    expect((await call("GET", list, "/core/guarantees?state=LOST", as(payerToken))).body.code).to.equal(
      "invalid_request",
    );
    const timeline = "/core/guarantees/{id}/timeline";
    const steps = await call("GET", timeline, `/core/guarantees/${v2Id}/timeline`, as(recipientToken));
    expect(steps.status).to.equal(200);
    expect(steps.body.timeline.map((step: { kind: string }) => step.kind)).to.deep.equal([
      "issued",
      "netted",
      "state",
    ]);
    expect(steps.body.timeline[1]).to.include({ cycle_id: 1, tx_hash: one.body.commit_tx, clock: "chain" });
    expect((await call("GET", timeline, `/core/guarantees/${v2Id}/timeline`)).status).to.equal(401);
    expect(
      (await call("GET", timeline, `/core/guarantees/${v2Id}/timeline`, as(strangerToken))).body.code,
    ).to.equal("guarantee_not_found");
    expect(
      (await call("GET", timeline, "/core/guarantees/0x12/timeline", as(payerToken))).body.code,
    ).to.equal("invalid_request");

    const proof = "/core/cycles/{id}/participants/{address}/proof";
    const credit = await call("GET", proof, `/core/cycles/1/participants/${recipient.address}/proof`);
    expect(credit.status).to.equal(200);
    expect(credit.body.positions[0]).to.include({ debit: "0", credit: "1500", claimed: false });
    expect(credit.body.positions[0].claim_net_credit_args.slice(0, 3)).to.deep.equal([
      "1",
      ZERO_ADDRESS,
      recipient.address,
    ]);
    // The claim proves the recipient's summary: credit = inTotal − total.
    expect(credit.body.positions[0].claim_net_credit_args[3]).to.include({ total: "0", inTotal: "1500" });
    const debit = await call(
      "GET",
      proof,
      `/core/cycles/1/participants/${payer.address.toLowerCase()}/proof`,
    );
    expect(debit.body.positions[0]).to.include({ debit: "1500", credit: "0", claim_net_credit_args: null });
    expect(
      (await call("GET", proof, `/core/cycles/1/participants/${stranger.address}/proof`)).body.code,
    ).to.equal("position_not_found");
    expect(
      (await call("GET", proof, `/core/cycles/9/participants/${stranger.address}/proof`)).body.code,
    ).to.equal("cycle_not_found");
    expect((await call("GET", proof, "/core/cycles/1/participants/0x12/proof")).body.code).to.equal(
      "invalid_request",
    );

    const leaves = "/core/cycles/{id}/guarantees";
    const payerLeaves = await call("GET", leaves, `/core/cycles/1/guarantees?payer=${payer.address}`);
    expect(payerLeaves.status).to.equal(200);
    expect(payerLeaves.body.guarantees).to.have.length(2);
    expect((await call("GET", leaves, "/core/cycles/1/guarantees")).body.code).to.equal("invalid_request");
    expect((await call("GET", leaves, "/core/cycles/1/guarantees?payer=0x12")).body.code).to.equal(
      "invalid_request",
    );
    expect(
      (await call("GET", leaves, `/core/cycles/9/guarantees?payer=${payer.address}`)).body.code,
    ).to.equal("cycle_not_found");

    const debits = "/core/cycles/{id}/debits/{payer}";
    const trees = await call("GET", debits, `/core/cycles/1/debits/${payer.address}`);
    expect(trees.status).to.equal(200);
    expect(trees.body.trees).to.have.length(1);
    expect(trees.body.trees[0].positions).to.have.length(2);
    expect((await call("GET", debits, "/core/cycles/1/debits/0x12")).body.code).to.equal("invalid_request");
    expect((await call("GET", debits, `/core/cycles/9/debits/${payer.address}`)).body.code).to.equal(
      "cycle_not_found",
    );

    // A withdrawal request on chain shows up in Core's view of what is withdrawable.
    await (await vault.requestWithdrawal(ZERO_ADDRESS, 2_000n)).wait();
    await tasks.indexer.tick();
    const withdrawals = "/core/users/{address}/withdrawals";
    const own = await call("GET", withdrawals, `/core/users/${payer.address}/withdrawals`, as(payerToken));
    expect(own.status).to.equal(200);
    expect(own.body.withdrawals).to.have.length(1);
    expect(own.body.withdrawals[0]).to.include({ withdrawal_id: "1", amount: "2000", state: "PENDING" });
    expect(own.body.withdrawable[0]).to.include({ pending_withdrawal: "2000", finalizable_amount: "2000" });
    expect((await call("GET", withdrawals, `/core/users/${payer.address}/withdrawals`)).status).to.equal(401);
    expect(
      (await call("GET", withdrawals, `/core/users/${payer.address}/withdrawals`, as(strangerToken))).body
        .code,
    ).to.equal("not_authorized_for_user");
    expect(
      (await call("GET", withdrawals, "/core/users/0x12/withdrawals", as(strangerToken))).body.code,
    ).to.equal("invalid_request");
  });

  it("webhook admin endpoints match, success and failure", async () => {
    const adminAuth = { headers: bearer((await signIn(url, admin)).access_token) };
    const strangerAuth = { headers: bearer((await signIn(url, stranger)).access_token) };
    const collection = "/core/admin/webhooks";
    const one = "/core/admin/webhooks/{id}";
    const deliveries = "/core/admin/webhooks/{id}/deliveries";
    const hook = `/core/admin/webhooks/${CONFIGURED_WEBHOOK}`;
    const newHook = { url: "https://hooks.example.com/surety", event_types: ["guarantee.issued"] };

    // Every route: no token → 401 with a Bearer challenge, a non-admin wallet → 403.
    for (const [method, template, path] of [
      ["POST", collection, collection],
      ["GET", collection, collection],
      ["GET", one, hook],
      ["DELETE", one, hook],
      ["GET", deliveries, `${hook}/deliveries`],
    ] as const) {
      const json = method === "POST" ? newHook : undefined;
      const missing = await call(method, template, path, { json });
      expect(missing.status, `${method} ${path}`).to.equal(401);
      expect(missing.headers.get("www-authenticate")).to.match(/^Bearer/);
      const denied = await call(method, template, path, { json, ...strangerAuth });
      expect(denied.status, `${method} ${path}`).to.equal(403);
      expect(denied.body.code).to.equal("not_admin");
    }
    // A path parameter that is not valid percent-encoding: 400 before any auth check.
    for (const [method, template, path] of [
      ["GET", one, "/core/admin/webhooks/%ff"],
      ["DELETE", one, "/core/admin/webhooks/%E0%A4%A"],
      ["GET", deliveries, "/core/admin/webhooks/%C3%28/deliveries"],
    ] as const) {
      const malformed = await call(method, template, path, adminAuth);
      expect(malformed.status, `${method} ${path}`).to.equal(400);
      expect(malformed.body.code).to.equal("malformed_path");
    }

    // POST: bad fields, malformed / oversized / mis-encoded bodies, then two subscriptions.
    const badUrl = await call("POST", collection, collection, {
      json: { ...newHook, url: "http://hooks.example.com/surety" },
      ...adminAuth,
    });
    expect(badUrl.status).to.equal(400);
    expect(badUrl.body).to.include({ code: "invalid_request" });
    expect(badUrl.body.error).to.match(/^url: /);
    const badTypes = await call("POST", collection, collection, {
      json: { ...newHook, event_types: ["guarantee.nope"] },
      ...adminAuth,
    });
    expect(badTypes.body.error).to.match(/^event_types\[0\]: /);
    expect((await call("POST", collection, collection, { rawBody: "{", ...adminAuth })).body.code).to.equal(
      "malformed_json",
    );
    const tooLarge = await call("POST", collection, collection, {
      json: { ...newHook, description: "x".repeat(70_000) },
      ...adminAuth,
    });
    expect(tooLarge.status).to.equal(413);
    const latin1 = await call("POST", collection, collection, {
      rawBody: JSON.stringify(newHook),
      headers: { ...adminAuth.headers, "content-type": "application/json; charset=latin1" },
    });
    expect(latin1.status).to.equal(415);
    expect(latin1.body.code).to.equal("unsupported_charset");

    const generated = await call("POST", collection, collection, { json: newHook, ...adminAuth });
    expect(generated.status).to.equal(201);
    expect(generated.body).to.include({ source: "api", description: null, url: newHook.url });
    expect(generated.body.secret).to.match(/^whsec_[0-9a-f]{64}$/);
    const chosen = await call("POST", collection, collection, {
      json: { url: "http://127.0.0.1:9/h", event_types: "*", secret: RECEIVER_SECRET, description: "all" },
      ...adminAuth,
    });
    expect(chosen.status).to.equal(201);
    expect(chosen.body).to.include({ secret: RECEIVER_SECRET, description: "all" });
    expect(chosen.body.event_types).to.deep.equal(["*"]);

    // GET: the list (configured first-class, no secrets) and one subscription.
    const list = await call("GET", collection, collection, adminAuth);
    expect(list.status).to.equal(200);
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).to.have.members([
      CONFIGURED_WEBHOOK,
      generated.body.id,
      chosen.body.id,
    ]);
    expect(JSON.stringify(list.body)).not.to.contain("secret");
    const configured = await call("GET", one, hook, adminAuth);
    expect(configured.status).to.equal(200);
    expect(configured.body).to.include({ id: CONFIGURED_WEBHOOK, source: "config", url: receiver.url });
    expect((await call("GET", one, "/core/admin/webhooks/whk_nope", adminAuth)).body.code).to.equal(
      "webhook_not_found",
    );

    // Deliveries: the two guarantees issued above (4242, 4343) wrote one each. The receiver refuses
    // the first attempt (a pending retry with its error), the second is delivered.
    const dispatcher = createWebhookDispatcher(t.core.context, { jitter: () => 0 });
    receiver.refuseNext = 1;
    expect(await dispatcher.tick()).to.deep.equal({ attempted: 2, delivered: 1, retrying: 1, failed: 0 });
    const all = await call("GET", deliveries, `${hook}/deliveries`, adminAuth);
    expect(all.status).to.equal(200);
    expect(all.body.webhook_id).to.equal(CONFIGURED_WEBHOOK);
    expect(all.body.next_cursor).to.equal(null);
    expect(all.body.deliveries.map((d: { status: string }) => d.status).sort()).to.deep.equal([
      "delivered",
      "pending",
    ]);
    const pending = await call("GET", deliveries, `${hook}/deliveries?status=pending`, adminAuth);
    expect(pending.body.deliveries).to.have.length(1);
    expect(pending.body.deliveries[0]).to.include({
      event_type: "guarantee.issued",
      attempts: 1,
      last_status_code: 503,
      last_error: "HTTP 503: busy",
      delivered_at: null,
    });
    expect(pending.body.deliveries[0].next_attempt_at).to.be.a("string");
    const first = await call("GET", deliveries, `${hook}/deliveries?limit=1`, adminAuth);
    expect(first.body.deliveries).to.have.length(1);
    expect(first.body.next_cursor).to.match(/^[1-9][0-9]*$/);
    const rest = await call(
      "GET",
      deliveries,
      `${hook}/deliveries?limit=1&cursor=${first.body.next_cursor}`,
      adminAuth,
    );
    expect(rest.body.deliveries).to.have.length(1);
    expect(rest.body.next_cursor).to.equal(null);
    expect(rest.body.deliveries[0].event_id).not.to.equal(first.body.deliveries[0].event_id);
    for (const query of ["?limit=0", "?status=sent", "?cursor=abc", "?limit=1&limit=2"]) {
      const refused = await call("GET", deliveries, `${hook}/deliveries${query}`, adminAuth);
      expect(refused.status, query).to.equal(400);
      expect(refused.body.code, query).to.equal("invalid_request");
    }
    expect(
      (await call("GET", deliveries, "/core/admin/webhooks/whk_nope/deliveries", adminAuth)).body.code,
    ).to.equal("webhook_not_found");
    expect(
      (await call("GET", deliveries, `/core/admin/webhooks/${chosen.body.id}/deliveries`, adminAuth)).body
        .deliveries,
    ).to.deep.equal([]);

    // DELETE: configured ones only in the configuration; API-made ones once.
    const refusedDelete = await call("DELETE", one, hook, adminAuth);
    expect(refusedDelete.status).to.equal(409);
    expect(refusedDelete.body.code).to.equal("configured_webhook");
    const removed = await call("DELETE", one, `/core/admin/webhooks/${generated.body.id}`, adminAuth);
    expect(removed.status).to.equal(204);
    expect(removed.body).to.equal(undefined);
    const again = await call("DELETE", one, `/core/admin/webhooks/${generated.body.id}`, adminAuth);
    expect(again.body.code).to.equal("webhook_not_found");

    // The admin's list of every payer's collateral.
    const users = "/core/users";
    const listed = await call("GET", users, "/core/users?limit=1", adminAuth);
    expect(listed.status).to.equal(200);
    expect(listed.body.balances[0]).to.include({ user_address: payer.address, asset_address: ZERO_ADDRESS });
    expect((await call("GET", users, "/core/users")).status).to.equal(401);
    expect((await call("GET", users, "/core/users", strangerAuth)).body.code).to.equal("not_admin");
    expect((await call("GET", users, "/core/users?cursor=nope", adminAuth)).body.code).to.equal(
      "invalid_request",
    );

    // One delivery, a retry, a test event (the console's webhook actions).
    const detail = "/core/admin/webhooks/{id}/deliveries/{event_id}";
    const retry = "/core/admin/webhooks/{id}/deliveries/{event_id}/retry";
    const test = "/core/admin/webhooks/{id}/test";
    const queued = await call("POST", test, `${hook}/test`, adminAuth);
    expect(queued.status).to.equal(201);
    const eventId = queued.body.delivery.event_id as string;
    expect((await call("GET", detail, `${hook}/deliveries/${eventId}`, adminAuth)).body.event.type).to.equal(
      "webhook.test",
    );
    expect((await call("POST", retry, `${hook}/deliveries/${eventId}/retry`, adminAuth)).status).to.equal(
      200,
    );
    await t.core.context.store.webhooks.recordWebhookAttempt(
      eventId,
      CONFIGURED_WEBHOOK,
      { status: "delivered", statusCode: 200 },
      T0,
    );
    expect((await call("POST", retry, `${hook}/deliveries/${eventId}/retry`, adminAuth)).status).to.equal(
      409,
    );
    for (const [method, template, path] of [
      ["GET", detail, `${hook}/deliveries/${eventId}`],
      ["POST", retry, `${hook}/deliveries/${eventId}/retry`],
      ["POST", test, `${hook}/test`],
    ] as const) {
      expect((await call(method, template, path)).status).to.equal(401);
      expect((await call(method, template, path, strangerAuth)).status).to.equal(403);
    }
    expect((await call("GET", detail, `${hook}/deliveries/evt_none`, adminAuth)).status).to.equal(404);
    expect((await call("POST", retry, `${hook}/deliveries/evt_none/retry`, adminAuth)).status).to.equal(404);
    expect((await call("POST", test, "/core/admin/webhooks/whk_nope/test", adminAuth)).status).to.equal(404);
    expect((await call("GET", detail, `${hook}/deliveries/nope`, adminAuth)).status).to.equal(400);
    expect((await call("POST", retry, `${hook}/deliveries/nope/retry`, adminAuth)).status).to.equal(400);
    expect((await call("POST", test, "/core/admin/webhooks/%ff/test", adminAuth)).status).to.equal(400);

    // Every documented status of the admin routes was seen, but for the 500 nothing here can cause.
    const unexercised = checker
      .documentedResponses()
      .filter((key) => key.includes(" /core/admin/") && !key.endsWith(" 500"))
      .filter((key) => !checker.exercised.has(key));
    expect(unexercised).to.deep.equal([]);
  });

  it("console reads match, success and failure", async () => {
    const payerAuth = { headers: bearer((await signIn(url, payer)).access_token) };
    const strangerAuth = { headers: bearer((await signIn(url, stranger)).access_token) };
    expect((await call("GET", "/console/api/config", "/console/api/config")).status).to.equal(200);
    const session = "/console/api/session";
    expect((await call("GET", session, session, payerAuth)).body.address).to.equal(payer.address);
    expect((await call("GET", session, session)).status).to.equal(401);
    const cycles = "/console/api/cycles";
    expect((await call("GET", cycles, `${cycles}?limit=2`)).status).to.equal(200);
    expect((await call("GET", cycles, `${cycles}?before=0`)).status).to.equal(400);
    const search = "/console/api/guarantees";
    expect((await call("GET", search, `${search}?payer=${payer.address}&from=0`, payerAuth)).status).to.equal(
      200,
    );
    expect((await call("GET", search, `${search}?q=nope`, payerAuth)).status).to.equal(400);
    expect((await call("GET", search, search)).status).to.equal(401);
    expect((await call("GET", search, search, strangerAuth)).status).to.equal(403);
    const ledger = "/console/api/users/{address}/ledger";
    expect(
      (await call("GET", ledger, `/console/api/users/${payer.address}/ledger`, payerAuth)).status,
    ).to.equal(200);
    expect((await call("GET", ledger, "/console/api/users/0x12/ledger", payerAuth)).status).to.equal(400);
    expect((await call("GET", ledger, `/console/api/users/${payer.address}/ledger`)).status).to.equal(401);
    expect(
      (await call("GET", ledger, `/console/api/users/${payer.address}/ledger`, strangerAuth)).status,
    ).to.equal(403);
  });

  it("unknown routes answer the common error shape", async () => {
    const response = await post(url, "/core/nothing-here", {});
    expect(response.status).to.equal(404);
    expect(Object.keys(response.body).sort()).to.deep.equal(["code", "error"]);
    expect(response.body.code).to.equal("not_found");
  });

  it("health 503 matches when the store is down", async () => {
    const down = await startTestCore();
    try {
      await down.core.context.store.close();
      const response = await request(down.core.url, "GET", "/core/health");
      checker.check("GET", "/core/health", response);
      expect(response.status).to.equal(503);
      expect(response.body).to.include({ status: "fail", db: "fail", chain_rpc: "ok" });
    } finally {
      await down.stop().catch(() => undefined);
    }
  });

  it("every documented operation was exercised", () => {
    const called = new Set([...checker.exercised].map((key) => key.split(" ").slice(0, 2).join(" ")));
    expect(checker.operations().filter((operation) => !called.has(operation))).to.deep.equal([]);
  });
});
