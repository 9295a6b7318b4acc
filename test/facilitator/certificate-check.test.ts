/**
 * What /settle checks in Core's certificate before handing it to a seller
 * (facilitator/settle.ts `certificateProblem`), with certificates made by the
 * sdk's real codec and BLS signer, and the success body as the reference
 * x402 client reads it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { HTTPFacilitatorClient } from "@x402/core/http";
import { blsKeyFromSecret, blsSign } from "../../sdk/bls";
import type { Certificate } from "../../sdk/certificate";
import { encodeCertificateClaims } from "../../sdk/certificate";
import type { GuaranteeClaims } from "../../sdk/claims";
import { guaranteeId } from "../../sdk/ids";
import { parseSettleResult } from "../../sdk/x402";
import { settleSuccessBody } from "../../facilitator/api/responses";
import { certificateProblem } from "../../facilitator/settle";
import { parsePaymentRequest } from "../../facilitator/verify";
import {
  CHAIN_ID,
  NETWORK,
  VAULT,
  bodyFor,
  coreBls,
  payer,
  payloadFor,
  requirementsFor,
  sign,
  stranger,
  testDeployment,
  v1Claims,
  v2Claims,
} from "./helpers";

const deployment = testDeployment();

function certify(
  claims: GuaranteeClaims,
  secretKey: Uint8Array = coreBls.secretKey,
  vault: string = VAULT,
): Certificate {
  const encoded = encodeCertificateClaims(claims, { chainId: CHAIN_ID, vault });
  const signature = blsSign(secretKey, Buffer.from(encoded.slice(2), "hex"));
  return { claims: encoded, signature: "0x" + Buffer.from(signature).toString("hex") };
}

describe("facilitator certificate checks", function () {
  it("accepts Core's certificate for exactly these claims (V1 and V2)", async function () {
    for (const claims of [v1Claims(), v2Claims()]) {
      const request = parsePaymentRequest(bodyFor(await sign(claims), 2));
      expect(
        await certificateProblem(certify(request.paymentPayload.payload.claims), request, deployment),
      ).to.equal(null);
    }
  });

  it("checks the certificates of concurrent settlements together; a bad one is refused alone", async function () {
    const requests = await Promise.all(
      [v1Claims(), v2Claims(), v1Claims(), v2Claims()].map(async (claims) =>
        parsePaymentRequest(bodyFor(await sign(claims), 2)),
      ),
    );
    const certificates = requests.map((r) => certify(r.paymentPayload.payload.claims));
    const other = blsKeyFromSecret("0x" + "66".repeat(32));
    certificates[2] = certify(requests[2].paymentPayload.payload.claims, other.secretKey);
    const problems = await Promise.all(
      requests.map((request, i) => certificateProblem(certificates[i], request, deployment)),
    );
    expect(problems[0]).to.equal(null);
    expect(problems[1]).to.equal(null);
    expect(problems[2]).to.match(/BLS signature/);
    expect(problems[3]).to.equal(null);
  });

  it("refuses a certificate signed by another BLS key", async function () {
    const request = parsePaymentRequest(bodyFor(await sign(v1Claims()), 1));
    const other = blsKeyFromSecret("0x" + "66".repeat(32));
    const problem = await certificateProblem(
      certify(request.paymentPayload.payload.claims, other.secretKey),
      request,
      deployment,
    );
    expect(problem).to.match(/BLS signature/);
  });

  it("refuses a certificate whose signature was made over other bytes", async function () {
    const request = parsePaymentRequest(bodyFor(await sign(v1Claims()), 1));
    const good = certify(request.paymentPayload.payload.claims);
    const other = certify(v1Claims());
    expect(
      await certificateProblem({ claims: good.claims, signature: other.signature }, request, deployment),
    ).to.match(/BLS signature/);
  });

  it("refuses a valid certificate for other claims (amount, recipient, policy)", async function () {
    const claims = v2Claims();
    const request = parsePaymentRequest(bodyFor(await sign(claims), 2));
    for (const other of [
      { ...claims, amount: claims.amount + 1n },
      { ...claims, recipient: stranger.address },
      { ...claims, policy: { ...claims.policy, minScore: 1 } },
      { ...claims, version: 1 as const },
    ]) {
      expect(await certificateProblem(certify(other as GuaranteeClaims), request, deployment)).to.match(
        /does not bind/,
      );
    }
  });

  it("refuses a certificate for the same claims under another Vault", async function () {
    const request = parsePaymentRequest(bodyFor(await sign(v1Claims()), 1));
    const certificate = certify(request.paymentPayload.payload.claims, coreBls.secretKey, stranger.address);
    expect(await certificateProblem(certificate, request, deployment)).to.match(/does not bind/);
  });

  it("refuses signed bytes that are not certificate claims", async function () {
    const request = parsePaymentRequest(bodyFor(await sign(v1Claims()), 1));
    const bytes = Buffer.from("not an abi encoding");
    const signature = "0x" + Buffer.from(blsSign(coreBls.secretKey, bytes)).toString("hex");
    const certificate = { claims: "0x" + bytes.toString("hex"), signature };
    expect(await certificateProblem(certificate, request, deployment)).to.match(/do not decode/);
  });

  describe("the settle success body", function () {
    it("parses with the sdk and with the reference x402 client", async function () {
      const signed = await sign(v1Claims());
      const certificate = certify(signed.claims);
      const id = guaranteeId(deployment, signed.claims.user, signed.claims.reqId);
      const body = settleSuccessBody(certificate, id, NETWORK, payer.address);
      expect(parseSettleResult(body)).to.deep.equal({
        success: true,
        error: null,
        txHash: null,
        networkId: NETWORK,
        certificate,
      });

      // The reference client validates the body with its own schema; serve the real body to it.
      const server = createServer((_req, res) => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(body));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const client = new HTTPFacilitatorClient({ url: `http://127.0.0.1:${port}` });
        const requirements = requirementsFor(signed.claims, 2);
        const result = await client.settle(
          payloadFor(signed, 2, requirements) as never,
          requirements as never,
        );
        expect(result.success).to.equal(true);
        expect(result.transaction).to.equal(id);
        expect(result.network).to.equal(NETWORK);
        expect(result.payer).to.equal(payer.address);
        // The reference client drops unknown fields: the certificate survives in `extra`.
        expect(result.extra).to.deep.equal({ certificate, already_issued: false });
        expect(parseSettleResult(result).certificate).to.deep.equal(certificate);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });
});
