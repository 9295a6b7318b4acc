/**
 * The facilitator given several Core URLs (facilitator/core-client.ts, docs/facilitator.md "Several Core
 * replicas"): each call starts at the next URL in turn and moves on past a Core that cannot be reached or
 * answers 5xx; a retried issuance that meets its own stored guarantee is a success with the stored
 * certificate. A real Core, a port nobody listens on, and a real HTTP server answering 503 to everything
 * (what a replica that lost its database answers).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { toWireSignedGuarantee } from "../../sdk/claims";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { ManualClock } from "../../facilitator/clock";
import { CoreClient } from "../../facilitator/core-client";
import { type CoreFetch, CoreUnavailableError, coreFetch } from "../../facilitator/core-http";
import { FacilitatorConfigError } from "../../facilitator/config";
import type { DeploymentParams } from "../../facilitator/deployment";
import { startTestCore, type TestCore } from "../operator/helpers";
import { CHAIN_ID, T0, facilitatorConfig, facilitatorWallet, payer, sign, v1Claims } from "./helpers";

/** A port the kernel just handed out and nobody listens on. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe("facilitator with several Core URLs (failover)", function () {
  let t: TestCore;
  let failing: Server;
  let failingUrl: string;
  let dead: string;

  before(async function () {
    t = await startTestCore({ facilitators: [facilitatorWallet.address] });
    await t.core.context.store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10_000_000n, T0);
    failing = createServer((_req, res) => {
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "store unavailable", code: "unavailable" }));
    });
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
    dead = await deadUrl();
  });

  after(async function () {
    await new Promise((resolve) => failing?.close(resolve));
    await t?.stop();
  });

  /** The real transport to `url`, logging which Core each request went to. */
  function observed(url: string, name: string, log: string[]): CoreFetch {
    const inner = coreFetch(url, 2_000);
    return (request) => {
      log.push(`${name} ${request.method} ${request.path}`);
      return inner(request);
    };
  }

  /** Signed for the running Core's deployment (its Vault address is in the EIP-712 domain). */
  const wire = async (reqId: bigint, deployment?: DeploymentParams) =>
    toWireSignedGuarantee(
      await sign(v1Claims({ asset: ZERO_ADDRESS, amount: 1_000n, reqId }), "eip712", payer, deployment),
    );

  it("takes a comma-separated list of URLs, each checked", function () {
    const config = facilitatorConfig({ coreUrl: ` http://a.test:8080/ ,https://b.test ` });
    expect(config.coreUrl).to.equal("http://a.test:8080,https://b.test");
    expect(() => facilitatorConfig({ coreUrl: "http://a.test,ftp://b.test" }))
      .to.throw(FacilitatorConfigError)
      .with.property("message")
      .that.matches(/coreUrl: URL 2: /);
    expect(() => facilitatorConfig({ coreUrl: "http://a.test,http://a.test/" })).to.throw(
      /the same URL twice/,
    );
  });

  it("starts each call at the next Core and moves past an unreachable one and a 5xx one", async function () {
    const log: string[] = [];
    const client = new CoreClient({
      config: facilitatorConfig({ chainId: CHAIN_ID }),
      clock: new ManualClock(T0),
      fetchCore: [
        observed(dead, "dead", log),
        observed(failingUrl, "503", log),
        observed(t.core.url, "core", log),
      ],
    });
    expect((await client.getDeployment({ fresh: true })).chainId).to.equal(CHAIN_ID);
    expect(log).to.deep.equal([
      "dead GET /core/public-params",
      "503 GET /core/public-params",
      "core GET /core/public-params",
    ]);
    log.length = 0;
    await client.getDeployment({ fresh: true });
    expect(log).to.deep.equal(["503 GET /core/public-params", "core GET /core/public-params"]);
    log.length = 0;
    await client.getDeployment({ fresh: true });
    expect(log).to.deep.equal(["core GET /core/public-params"]);

    // Issuance: the unreachable and the failing Core are passed over; the working one signs in and issues.
    const body = await wire(9_001n, await client.getDeployment());
    const first = await client.issueGuarantee(body);
    expect(first.ok && !first.replayed, JSON.stringify(first)).to.equal(true);
    // The same request again (as after a lost answer), whichever Core it starts at: Core's 409 with the
    // stored certificate is a success with that certificate.
    const again = await client.issueGuarantee(body);
    expect(again.ok && again.replayed).to.equal(true);
    if (first.ok && again.ok) expect(again.certificate).to.deep.equal(first.certificate);
  });

  it("a Core that issued but whose answer was lost, then another's 409: the facilitator's own retry (replayed false)", async function () {
    const real = coreFetch(t.core.url, 2_000);
    let lost = 0;
    // Delivers the issuance to the real Core, then loses its answer (as a timeout or a reset would).
    const losesAnswers: CoreFetch = async (request) => {
      const response = await real(request);
      if (request.path !== "/core/guarantees") return response;
      lost++;
      throw new CoreUnavailableError("Core did not answer POST /core/guarantees within 2000 ms", true);
    };
    const client = new CoreClient({
      config: facilitatorConfig({ chainId: CHAIN_ID }),
      clock: new ManualClock(T0),
      fetchCore: [losesAnswers, real],
    });
    const deployment = await client.getDeployment({ fresh: true }); // starts at the first; next call at the second
    const body = await wire(9_004n, deployment);
    await client.getPublicParams({ fresh: true }); // the issuance below starts at the one that loses answers
    const outcome = await client.issueGuarantee(body);
    expect(lost).to.equal(1);
    expect(outcome.ok && !outcome.replayed, JSON.stringify(outcome)).to.equal(true);
    // A later call meeting the stored guarantee on the first try is a replay.
    const later = await client.issueGuarantee(body);
    expect(later.ok && later.replayed, JSON.stringify(later)).to.equal(true);
  });

  it("fails only when no Core answers: unreachable → CoreUnavailableError, all failing → the last failure", async function () {
    const unreachable = new CoreClient({
      config: facilitatorConfig({ coreUrl: `${dead},${await deadUrl()}` }),
      clock: new ManualClock(T0),
    });
    const error = await unreachable.issueGuarantee(await wire(9_002n)).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(CoreUnavailableError);
    expect((error as Error).message).to.match(/no Core of 2 could be reached/);

    const failingOnly = new CoreClient({
      config: facilitatorConfig({ coreUrl: `${dead},${failingUrl}` }),
      clock: new ManualClock(T0),
    });
    // Its sign-in answered 503 (the 503 Core is also the last one tried): that refusal is what is thrown.
    const refused = await failingOnly.issueGuarantee(await wire(9_003n)).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(refused).to.have.property("status", 503);
  });
});
