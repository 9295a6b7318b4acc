/**
 * Interop: the reference x402 facilitator client (`@x402/core`'s
 * HTTPFacilitatorClient, what reference resource servers use) talks to our
 * facilitator over HTTP and reads every answer without a schema error.
 *
 * Settle failures run against a pinned deployment with Core away; a
 * successful settlement runs against a real Core on the deployed test
 * contracts, with the payer's collateral credited in Core's store.
 */
import { expect } from "chai";
import { HTTPFacilitatorClient } from "@x402/core/http";
import type { SettleError } from "@x402/core/types";
import { SCHEME } from "../../sdk/x402";
import { parseCertificate, verifyCertificateSignature } from "../../sdk/certificate";
import type { GuaranteeClaims } from "../../sdk/claims";
import { guaranteeId } from "../../sdk/ids";
import { ZERO_ADDRESS } from "../../sdk/wire";
import type { DeploymentParams } from "../../facilitator/deployment";
import { startTestCore, TEST_BLS_PUBLIC_KEY, TEST_DEPLOYMENT, type TestCore } from "../operator/helpers";
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
  testPolicy,
  v1Claims,
  v2Claims,
} from "./helpers";
import { closeUnreachableServices, unreachableUrl } from "../support/unreachable";

// The reference client is typed for its own schemes; our envelopes are the same JSON shapes.
type ReferencePayload = Parameters<HTTPFacilitatorClient["verify"]>[0];
type ReferenceRequirements = Parameters<HTTPFacilitatorClient["verify"]>[1];

async function referencePayment(
  x402Version: 1 | 2,
  claims: GuaranteeClaims = x402Version === 1 ? v1Claims() : v2Claims(),
  deployment?: DeploymentParams,
) {
  const signed = await sign(claims, "eip712", payer, deployment);
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
    facilitator = await startTestFacilitator({ coreUrl: await unreachableUrl() });
    client = new HTTPFacilitatorClient({ url: facilitator.url, timeoutMs: 5000 });
  });

  after(async function () {
    await facilitator?.stop();
    await closeUnreachableServices();
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

describe("facilitator interop with @x402/core HTTPFacilitatorClient (real Core)", function () {
  let core: TestCore;
  let facilitator: TestFacilitator;
  let client: HTTPFacilitatorClient;
  let deployment: DeploymentParams;

  before(async function () {
    core = await startTestCore({ facilitators: [facilitatorWallet.address] });
    await core.core.context.store.collateral.creditDeposit(payer.address, ZERO_ADDRESS, 10n ** 18n, T0);
    facilitator = await startTestFacilitator({ coreUrl: core.core.url }, {});
    client = new HTTPFacilitatorClient({ url: facilitator.url, timeoutMs: 5000 });
    deployment = await facilitator.server.context.core.getDeployment();
  });

  after(async function () {
    await facilitator?.stop();
    await core?.stop();
  });

  for (const x402Version of [1, 2] as const) {
    it(`reads a successful /settle: transaction, network and payer (x402 v${x402Version})`, async function () {
      const claims =
        x402Version === 1
          ? v1Claims({ asset: ZERO_ADDRESS })
          : v2Claims({ asset: ZERO_ADDRESS }, testPolicy({ registry: TEST_DEPLOYMENT.trustedRegistries[0] }));
      const { payload, requirements } = await referencePayment(x402Version, claims, deployment);
      const result = await client.settle(payload, requirements);
      expect(result.success).to.equal(true);
      expect(result.transaction).to.equal(guaranteeId(deployment, claims.user, claims.reqId));
      expect(result.network).to.equal(NETWORK);
      expect(result.payer).to.equal(payer.address);
      expect(result.errorReason).to.equal(undefined);
      expect(result.errorMessage).to.equal(undefined);
      // The reference schema keeps only its own fields; the certificate is ours, on the same answer.
      expect(result).not.to.have.property("certificate");
      const stored = await core.core.context.store.guarantees.getGuarantee(result.transaction);
      const certificate = parseCertificate({
        claims: stored?.certificateClaims,
        signature: stored?.certificateSignature,
      });
      expect(verifyCertificateSignature(TEST_BLS_PUBLIC_KEY, certificate)).to.equal(true);
    });
  }

  it("turns Core's refusal into a SettleError carrying Core's code", async function () {
    const { payload, requirements } = await referencePayment(
      2,
      v1Claims({ asset: ZERO_ADDRESS, amount: 10n ** 19n }),
      deployment,
    );
    const error = await client.settle(payload, requirements).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect((error as Error).name).to.equal("SettleError");
    expect((error as SettleError).statusCode).to.equal(400);
    expect((error as SettleError).errorReason).to.equal("insufficient_collateral");
    expect((error as SettleError).payer).to.equal(payer.address);
  });
});
