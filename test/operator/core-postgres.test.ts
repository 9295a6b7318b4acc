import { expect } from "chai";
import { PostgresStore } from "../../operator/store";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { startTestPostgres, type TestPostgres } from "../support/embedded-postgres";
import { facilitator, issue, payer, recipient, signedBody, v1Claims } from "./guarantee-fixtures";
import { signIn, startTestCore, T0, type TestCore } from "./helpers";

describe("Core on PostgreSQL (SURETY_DATABASE_URL)", function () {
  this.timeout(60_000);
  let server: TestPostgres;
  let t: TestCore | undefined;

  before(async () => {
    server = await startTestPostgres();
  });

  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  after(async () => {
    await server.stop();
  });

  it("signs in, issues and answers a retry 409 with the stored certificate, all on the database", async () => {
    const databaseUrl = await server.createDatabase("core_http");
    t = await startTestCore({ databaseUrl, facilitators: [facilitator.address] });
    const store = t.core.context.store;
    expect(store).to.be.instanceOf(PostgresStore);
    await store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000n, T0);
    const recipientToken = (await signIn(t.core.url, recipient)).access_token;
    const facilitatorToken = (await signIn(t.core.url, facilitator)).access_token;

    const body = await signedBody(v1Claims());
    const first = await issue(t.core.url, recipientToken, body);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const retry = await issue(t.core.url, facilitatorToken, body);
    expect(retry.status).to.equal(409);
    expect(retry.body).to.have.property("code", "duplicate_guarantee");
    expect(retry.body.certificate).to.deep.equal(first.body);
    expect((await store.collateral.getCollateral(payer.address, ZERO_ADDRESS)).locked).to.equal(1_000n);
  });
});
