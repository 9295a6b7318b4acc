/**
 * Interop: the reference x402 facilitator client (`@x402/core`'s
 * HTTPFacilitatorClient, what reference resource servers use) talks to our
 * facilitator over HTTP and reads every answer without a schema error.
 *
 * Settlement success needs an issuing Core (POST /core/guarantees), which is
 * not served yet: only settle failures are exercised here.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { HTTPFacilitatorClient } from "@x402/core/http";
import type { SettleError } from "@x402/core/types";
import { SCHEME } from "../../sdk/x402";
import {
  NETWORK,
  T0,
  facilitatorWallet,
  payer,
  payloadFor,
  requirementsFor,
  sign,
  startTestFacilitator,
  type TestFacilitator,
  v1Claims,
  v2Claims,
} from "./helpers";

// The reference client is typed for its own schemes; our envelopes are the same JSON shapes.
type ReferencePayload = Parameters<HTTPFacilitatorClient["verify"]>[0];
type ReferenceRequirements = Parameters<HTTPFacilitatorClient["verify"]>[1];

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

async function referencePayment(x402Version: 1 | 2, claims = x402Version === 1 ? v1Claims() : v2Claims()) {
  const signed = await sign(claims);
  const requirements = requirementsFor(signed.claims, x402Version);
  return {
    payload: payloadFor(signed, x402Version, requirements) as unknown as ReferencePayload,
    requirements: requirements as unknown as ReferenceRequirements,
  };
}

describe("facilitator interop with @x402/core HTTPFacilitatorClient", function () {
  let facilitator: TestFacilitator;
  let client: HTTPFacilitatorClient;

  before(async function () {
    facilitator = await startTestFacilitator({ coreUrl: await closedPortUrl() });
    client = new HTTPFacilitatorClient({ url: facilitator.url, timeoutMs: 5000 });
  });

  after(async function () {
    await facilitator?.stop();
  });

  it("reads /supported", async function () {
    const supported = await client.getSupported();
    const kinds = supported.kinds.map(({ x402Version, scheme, network }) => ({
      x402Version,
      scheme,
      network,
    }));
    expect(kinds).to.deep.equal([
      { x402Version: 1, scheme: SCHEME, network: NETWORK },
      { x402Version: 2, scheme: SCHEME, network: NETWORK },
    ]);
    expect(supported.extensions).to.deep.equal([]);
    expect(supported.signers).to.deep.equal({ "eip155:*": [facilitatorWallet.address] });
  });

  for (const x402Version of [1, 2] as const) {
    it(`reads a valid /verify answer with the payer (x402 v${x402Version})`, async function () {
      const { payload, requirements } = await referencePayment(x402Version);
      const result = await client.verify(payload, requirements);
      expect(result.isValid).to.equal(true);
      expect(result.invalidReason).to.equal(undefined);
      expect(result.payer).to.equal(payer.address);
    });

    it(`reads an invalid /verify answer with reason and message (x402 v${x402Version})`, async function () {
      const { payload, requirements } = await referencePayment(x402Version, v1Claims({ timestamp: T0 + 60 }));
      const result = await client.verify(payload, requirements);
      expect(result.isValid).to.equal(false);
      expect(result.invalidReason).to.equal("timestamp_in_future");
      expect(result.invalidMessage).to.be.a("string");
      expect(result.payer).to.equal(payer.address);
    });
  }

  it("turns a refused /settle into a SettleError carrying our reason", async function () {
    const { payload, requirements } = await referencePayment(2, v1Claims({ amount: 5n }));
    const changed = { ...(requirements as object), amount: "6" } as unknown as ReferenceRequirements;
    const error = await client.settle(payload, changed).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    // Each @x402/core entry point bundles its own copy of the class: compare by name.
    expect((error as Error).name).to.equal("SettleError");
    const settleError = error as SettleError;
    expect(settleError.statusCode).to.equal(400);
    // accepted (the original requirements) no longer matches the changed ones.
    expect(settleError.errorReason).to.equal("accepted_mismatch");
    expect(settleError.network).to.equal(NETWORK);
    expect(settleError.payer).to.equal(payer.address);
  });

  it("turns a /settle that Core cannot serve into a SettleError with status 500", async function () {
    const { payload, requirements } = await referencePayment(1);
    const error = await client.settle(payload, requirements).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect((error as Error).name).to.equal("SettleError");
    expect((error as SettleError).statusCode).to.equal(500);
    expect((error as SettleError).errorReason).to.equal("core_unavailable");
  });
});
