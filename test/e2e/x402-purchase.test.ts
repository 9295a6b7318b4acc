/**
 * A purchase end to end, every component real and on its own port:
 * buyer (`@x402/fetch` with the svc-credit `SuretyClientScheme`, an ethers
 * Wallet) → seller (Express + sdk/kits/paywall, x402 v1 and v2) →
 * facilitator (`startFacilitatorServer`, deployment read from Core) → Core
 * (`startCoreServer`, SQLite file in a temp dir, SIWE session of the
 * facilitator, contracts deployed on the Hardhat chain with Core's key in the
 * Vault). Collateral is credited in Core's store directly, so that this file
 * is about the HTTP purchase path only; test/e2e/protocol*.test.ts deposit on
 * chain and go through Core's indexer.
 *
 * All clocks are the wall clock (Core, facilitator and buyer must agree on
 * "now" for the timestamp window); nothing here waits on time.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import express from "express";
import { Wallet } from "ethers";
import { publicKeyFromArray } from "../../sdk/bls";
import { decodeCertificateClaims, verifyCertificateSignature } from "../../sdk/certificate";
import { toWireValidationPolicy } from "../../sdk/claims";
import { guaranteeId } from "../../sdk/ids";
import { ZERO_ADDRESS, formatNetwork } from "../../sdk/wire";
import { wrapFetchWithPayment } from "@x402/fetch";
import { type SuretySettlement, paywall } from "../../sdk/kits/paywall";
import { type PaymentPayload, decodePaymentHeader, decodePaymentResponseHeader } from "../../sdk/x402";
import { SuretyClientScheme, domainFromPublicParams } from "../../sdk/kits/x402-scheme";
import { officialClient } from "../support/x402-buyer";
import { facilitatorConfigFromObject } from "../../facilitator/config";
import { silentFacilitatorLogger } from "../../facilitator/logger";
import { type FacilitatorServer, startFacilitatorServer } from "../../facilitator/server";
import { systemClock } from "../../operator/clock";
import { silentLogger } from "../../operator/logger";
import { type CoreServer, startCoreServer } from "../../operator/server";
import {
  TEST_CHAIN_ID,
  TEST_DEPLOYMENT,
  deployTestContracts,
  tempDir,
  testConfig,
  testCoreDeps,
} from "../operator/helpers";

const payer = new Wallet("0x" + "a1".repeat(32));
const poorPayer = new Wallet("0x" + "a2".repeat(32));
const sellerWallet = new Wallet("0x" + "a3".repeat(32));
const facilitatorWallet = new Wallet("0x" + "a4".repeat(32));
const TUSD = TEST_DEPLOYMENT.tokens[0].address;
const REGISTRY = TEST_DEPLOYMENT.trustedRegistries[0];
const VALIDATOR = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
const NETWORK = formatNetwork(TEST_CHAIN_ID);
const PRICE = 1_000n;
const DEPOSIT = 100_000n;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

describe("x402 purchase end to end: buyer → seller → facilitator → Core", function () {
  let dir: ReturnType<typeof tempDir>;
  let core: CoreServer;
  let facilitator: FacilitatorServer;
  const sellers: Record<1 | 2, { url: string; server: Server }> = {} as never;
  const persisted: SuretySettlement[] = [];
  let failPersistence = false;
  let corePublicKey: Uint8Array;
  let publicParams: unknown;

  before(async function () {
    // Real contracts (Vault holding Core's BLS key: Core checks it at startup).
    const contracts = await deployTestContracts();
    dir = tempDir();
    core = await startCoreServer(testConfig(dir.path, { facilitators: [facilitatorWallet.address] }), {
      logger: silentLogger(),
      // No indexer here (deposits are credited by hand below): the wall clock stands for chain time.
      chainClock: systemClock,
      ...testCoreDeps(contracts.deployment),
    });
    const now = Math.floor(Date.now() / 1000);
    for (const asset of [ZERO_ADDRESS, TUSD])
      await core.context.store.collateral.creditDeposit(payer.address, asset, DEPOSIT, now);
    facilitator = await startFacilitatorServer(
      facilitatorConfigFromObject({
        host: "127.0.0.1",
        port: 0,
        logLevel: "silent",
        privateKey: facilitatorWallet.privateKey,
        coreUrl: core.url,
      }),
      { logger: silentFacilitatorLogger() },
    );
    publicParams = await (await fetch(`${core.url}/core/public-params`)).json();
    const params = publicParams as { public_key: unknown };
    corePublicKey = publicKeyFromArray(params.public_key, "public_key");

    for (const x402Version of [1, 2] as const) {
      const app = express();
      app.use(
        paywall({
          facilitatorUrl: facilitator.url,
          payTo: sellerWallet.address,
          network: NETWORK,
          x402Version,
          routes: {
            "GET /weather": { price: PRICE, asset: TUSD, description: "Weather report" },
            "GET /translate": {
              price: PRICE,
              asset: ZERO_ADDRESS,
              description: "Translation, paid once validated",
              validationPolicy: toWireValidationPolicy({
                registry: REGISTRY,
                validator: VALIDATOR,
                agentId: 7n,
                minScore: 80,
                jobHash: "0x" + "cd".repeat(32),
                tag: "translation-quality",
                deadline: now + 86_400,
              }),
            },
          },
          onSettled: (settlement) => {
            if (failPersistence) throw new Error("disk full");
            persisted.push(settlement);
          },
        }),
      );
      app.get(["/weather", "/translate"], (req, res) => {
        res.json({ path: req.path, guaranteeId: res.locals.surety.guaranteeId });
      });
      const server = createServer(app);
      sellers[x402Version] = { url: await listen(server), server };
    }
  });

  after(async function () {
    for (const seller of Object.values(sellers)) await close(seller.server);
    await facilitator?.close();
    await core?.close();
    dir?.remove();
  });

  /** The sent payment of a paid request: its header and the decoded payload. */
  interface SentPayment {
    header: { name: string; value: string };
    payload: PaymentPayload;
  }

  /** @x402/fetch with the svc-credit scheme; `onPayment` sees each payment header it sends. */
  function buyer(signer = payer, onPayment?: (payment: SentPayment) => void) {
    const client = officialClient(
      new SuretyClientScheme({
        signer,
        domain: domainFromPublicParams(publicParams),
        maxAmountPerRequest: { [TUSD]: PRICE, [ZERO_ADDRESS]: PRICE },
      }),
    );
    const recording = (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      for (const name of ["X-PAYMENT", "PAYMENT-SIGNATURE"]) {
        const value = request.headers.get(name);
        if (value !== null) onPayment?.({ header: { name, value }, payload: decodePaymentHeader(value) });
      }
      return fetch(request);
    };
    return wrapFetchWithPayment(recording, client);
  }

  async function locked(user: string, asset: string): Promise<bigint> {
    return (await core.context.store.collateral.getCollateral(user, asset)).locked;
  }

  for (const x402Version of [1, 2] as const) {
    for (const [path, version, state, asset] of [
      ["/weather", 1, "FINALIZED_PAYABLE", TUSD],
      ["/translate", 2, "PENDING_VALIDATION", ZERO_ADDRESS],
    ] as const) {
      it(`x402 v${x402Version}, guarantee V${version}: pays, is served, and holds a certificate Core signed`, async function () {
        const lockedBefore = await locked(payer.address, asset);
        const persistedBefore = persisted.length;
        const sent: SentPayment[] = [];
        const response = await buyer(payer, (p) => sent.push(p))(`${sellers[x402Version].url}${path}?q=1`);
        expect(response.status, await response.clone().text()).to.equal(200);
        const body = (await response.json()) as { path: string; guaranteeId: string };

        expect(sent).to.have.length(1);
        const payment = sent[0].payload;
        expect(payment.x402Version).to.equal(x402Version);
        expect(payment.payload.claims.version).to.equal(version);
        const headerName = x402Version === 1 ? "X-PAYMENT-RESPONSE" : "PAYMENT-RESPONSE";
        const settlement = decodePaymentResponseHeader(response.headers.get(headerName));
        expect(settlement).to.include({ success: true, error: null, networkId: NETWORK });

        // The certificate is Core's BLS signature over exactly this payment.
        const certificate = settlement.certificate!;
        expect(verifyCertificateSignature(corePublicKey, certificate)).to.equal(true);
        const decoded = decodeCertificateClaims(certificate.claims);
        expect(decoded.claims).to.deep.include({
          version,
          user: payer.address,
          recipient: sellerWallet.address,
          amount: PRICE,
          asset,
          reqId: payment.payload.claims.reqId,
        });
        const id = guaranteeId(
          { chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault },
          payer.address,
          payment.payload.claims.reqId,
        ).toLowerCase();
        expect(decoded.guaranteeId).to.equal(id);
        expect(body).to.deep.equal({ path, guaranteeId: id });

        // The seller persisted it; Core recorded it and locked the collateral.
        expect(persisted).to.have.length(persistedBefore + 1);
        expect(persisted.at(-1)).to.deep.include({
          certificate,
          guaranteeId: id,
          x402Version,
          payer: payer.address,
        });
        expect(await core.context.store.guarantees.getGuarantee(id)).to.deep.include({
          state,
          certificateClaims: certificate.claims,
        });
        expect(await locked(payer.address, asset)).to.equal(lockedBefore + PRICE);
      });
    }
  }

  it("a replayed payment header is not served twice (and not locked twice)", async function () {
    let payment: SentPayment | undefined;
    const first = await buyer(payer, (p) => (payment = p))(`${sellers[2].url}/weather`);
    expect(first.status).to.equal(200);
    const lockedAfterFirst = await locked(payer.address, TUSD);
    const replay = await fetch(`${sellers[2].url}/weather`, {
      headers: { [payment!.header.name]: payment!.header.value },
    });
    expect(replay.status).to.equal(402);
    expect(((await replay.json()) as { error: string }).error).to.equal("payment_already_used");
    expect(await locked(payer.address, TUSD)).to.equal(lockedAfterFirst);
  });

  it("a payer without collateral gets 402 with Core's reason and a failed settlement header", async function () {
    let payments = 0;
    const response = await buyer(poorPayer, () => void payments++)(`${sellers[1].url}/weather`);
    expect(response.status).to.equal(402);
    expect(payments).to.equal(1);
    const body = (await response.json()) as { invalidReason: string; invalidMessage: string };
    expect(body.invalidReason).to.equal("insufficient_collateral");
    const settlement = decodePaymentResponseHeader(response.headers.get("X-PAYMENT-RESPONSE"));
    expect(settlement).to.include({ success: false, certificate: null, error: "insufficient_collateral" });
  });

  it("when the seller cannot store the certificate it does not serve, and the same payment works again", async function () {
    let payment: SentPayment | undefined;
    failPersistence = true;
    try {
      const response = await buyer(payer, (p) => (payment = p))(`${sellers[1].url}/weather`);
      expect(response.status).to.equal(500);
      expect(((await response.json()) as { code: string }).code).to.equal("settlement_not_stored");
      expect(response.headers.get("X-PAYMENT-RESPONSE")).to.equal(null);
    } finally {
      failPersistence = false;
    }
    const lockedOnce = await locked(payer.address, TUSD);
    const again = await fetch(`${sellers[1].url}/weather`, {
      headers: { [payment!.header.name]: payment!.header.value },
    });
    expect(again.status).to.equal(200);
    expect(persisted.at(-1)?.claims.req_id).to.equal(payment!.payload.payload.claims.reqId.toString());
    expect(await locked(payer.address, TUSD)).to.equal(lockedOnce);
  });
});
