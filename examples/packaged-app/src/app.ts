/**
 * An x402 app outside the repository, on the published packages only: it starts the devnet with
 * `startDevnet` (@surety/devnet), sells a resource with `@x402/express` + `SuretyServerScheme` and with the
 * x402 v1 paywall (@surety/x402/paywall), and buys it with `@x402/fetch` + `SuretyClientScheme`
 * (@surety/x402), checking Core's certificate with @surety/sdk. The v2 seller keeps its replay ledger in a
 * SQLite file (`SqlitePaymentLedger`, @surety/x402/sqlite-ledger, with the app's own better-sqlite3) and
 * is restarted on it: the paid payment replayed to the restarted seller is still refused, before its
 * facilitator is asked. test/packages/consumer.test.ts copies this app into a temp dir, installs the
 * packed tarballs and runs it; it prints one JSON line of results.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { paymentMiddleware } from "@x402/express";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { Contract, JsonRpcProvider, Wallet } from "ethers";
import express from "express";
import { startDevnet } from "@surety/devnet";
import { ZERO_ADDRESS, guaranteeId, publicKeyFromArray, verifyCertificateSignature } from "@surety/sdk";
import { decodeBase64Json, parsePaymentPayload } from "@surety/sdk/x402";
import {
  PAYMENT_ALREADY_USED,
  SCHEME,
  SuretyServerScheme,
  certificateOfSettlement,
  suretyClientSchemeFromCore,
  suretyPrice,
} from "@surety/x402";
import { paywall } from "@surety/x402/paywall";
import { SqlitePaymentLedger } from "@surety/x402/sqlite-ledger";

const PRICE = 1_000n; // wei
const DEPOSIT = 10n ** 15n;

async function listen(app: express.Express): Promise<{ url: string; server: Server }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** The facilitator client, counting the settlements it is asked for. */
class CountingFacilitatorClient extends HTTPFacilitatorClient {
  settles = 0;
  override settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    this.settles++;
    return super.settle(payload, requirements);
  }
}

async function main(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  const devnet = await startDevnet({ cycleSeconds: 10, dir: process.env.CONSUMER_DEVNET_DIR });
  const servers = new Set<Server>();
  const ledgerDir = mkdtempSync(path.join(tmpdir(), "surety-app-ledger-"));
  const ledgerFile = path.join(ledgerDir, "payments.sqlite");
  const ledgers: SqlitePaymentLedger[] = [];
  try {
    const network = devnet.network as Network;
    const [buyer, seller, poorBuyer] = [devnet.accounts[1], devnet.accounts[2], devnet.accounts[3]];
    results.devnet = { chainId: devnet.chainId, vault: devnet.deployment.contracts.Vault.address };

    // The buyer's collateral: ETH deposited in the Vault on the devnet's chain.
    const provider = new JsonRpcProvider(devnet.urls.rpc, devnet.chainId, { staticNetwork: true });
    const vault = new Contract(
      devnet.deployment.contracts.Vault.address,
      ["function deposit() payable"],
      new Wallet(buyer.privateKey, provider),
    );
    await (await vault.getFunction("deposit")({ value: DEPOSIT })).wait();
    provider.destroy();

    // Seller, x402 v2: @x402/express with Surety's scheme beside any other, its replay ledger in a file.
    // Started again below on the same file, as after a restart.
    const startV2Seller = async () => {
      const ledger = new SqlitePaymentLedger(ledgerFile);
      ledgers.push(ledger);
      const facilitator = new CountingFacilitatorClient({ url: devnet.urls.facilitator });
      const resourceServer = new x402ResourceServer(facilitator);
      resourceServer.register(network, new SuretyServerScheme({ ledger }));
      const v2 = express();
      v2.use(
        paymentMiddleware(
          {
            "GET /weather": {
              accepts: {
                scheme: SCHEME,
                network,
                payTo: seller.address,
                price: suretyPrice({ asset: ZERO_ADDRESS, amount: PRICE }),
              },
              description: "Weather report",
            },
          },
          resourceServer,
        ),
      );
      v2.get("/weather", (_req, res) => void res.json({ weather: "sunny", x402: 2 }));
      const listening = await listen(v2);
      servers.add(listening.server);
      return { ...listening, ledger, facilitator };
    };
    // Seller, x402 v1: the paywall.
    const v1 = express();
    v1.use(
      paywall({
        facilitatorUrl: devnet.urls.facilitator,
        payTo: seller.address,
        network,
        x402Version: 1,
        routes: { "GET /weather": { price: PRICE, asset: ZERO_ADDRESS, description: "Weather report" } },
      }),
    );
    v1.get("/weather", (_req, res) => void res.json({ weather: "sunny", x402: 1 }));
    let v2Seller = await startV2Seller();
    const v1Seller = await listen(v1);
    servers.add(v1Seller.server);

    // Buyers: @x402/fetch with Surety's client scheme, the signing domain read from Core.
    const params = (await (await fetch(`${devnet.urls.core}/core/public-params`)).json()) as {
      public_key: unknown;
    };
    const corePublicKey = publicKeyFromArray(params.public_key);
    const buyerFor = async (privateKey: string) => {
      const scheme = await suretyClientSchemeFromCore(devnet.urls.core, {
        signer: new Wallet(privateKey),
        maxAmountPerRequest: { [ZERO_ADDRESS]: PRICE },
      });
      const sent: Headers[] = [];
      const recording = (input: string | URL | Request, init?: RequestInit) => {
        const request = new Request(input, init);
        sent.push(request.headers);
        return fetch(request);
      };
      const pay = wrapFetchWithPaymentFromConfig(recording, {
        schemes: [
          { network, client: scheme },
          { network, client: scheme, x402Version: 1 },
        ],
        spendControls: scheme.spendControls(),
      });
      return { pay, sent };
    };

    // A paid 200 (v2), once Core has indexed the deposit.
    const paying = await buyerFor(buyer.privateKey);
    let response: Response;
    for (let attempt = 0; ; attempt++) {
      response = await paying.pay(`${v2Seller.url}/weather`);
      if (response.status === 200 || attempt >= 30) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual(await response.json(), { weather: "sunny", x402: 2 });
    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE")!);
    assert.equal(settlement.success, true);
    const certificate = certificateOfSettlement(settlement);
    assert.ok(certificate, "the settlement carries Core's certificate");
    assert.equal(verifyCertificateSignature(corePublicKey, certificate), true);
    const header = paying.sent.at(-1)!.get("PAYMENT-SIGNATURE")!;
    const { claims } = parsePaymentPayload(decodeBase64Json(header, "payment")).payload;
    const id = guaranteeId(
      { chainId: devnet.chainId, vault: devnet.deployment.contracts.Vault.address },
      buyer.address,
      claims.reqId,
    );
    assert.equal(settlement.transaction.toLowerCase(), id.toLowerCase());
    results.paid = { status: response.status, guarantee: settlement.transaction };

    // The same PAYMENT-SIGNATURE again: refused, nothing served.
    const replay = await fetch(`${v2Seller.url}/weather`, { headers: { "PAYMENT-SIGNATURE": header } });
    const replayed = decodePaymentResponseHeader(replay.headers.get("PAYMENT-RESPONSE")!);
    assert.equal(replay.status, 402);
    assert.equal(replayed.errorReason, PAYMENT_ALREADY_USED);
    results.replay = { status: replay.status, errorReason: replayed.errorReason };

    // The seller restarts: its server, scheme and ledger closed, fresh ones on the same ledger file (on
    // another port: fetch's pool may still hold a connection to the old server's). The same
    // PAYMENT-SIGNATURE is still refused, by the ledger, before the facilitator is asked.
    await close(v2Seller.server);
    servers.delete(v2Seller.server);
    ledgers.splice(ledgers.indexOf(v2Seller.ledger), 1);
    v2Seller.ledger.close();
    v2Seller = await startV2Seller();
    const afterRestart = await fetch(`${v2Seller.url}/weather`, { headers: { "PAYMENT-SIGNATURE": header } });
    const afterRestartBody = await afterRestart.text();
    const refusedAgain = decodePaymentResponseHeader(afterRestart.headers.get("PAYMENT-RESPONSE")!);
    assert.equal(afterRestart.status, 402);
    assert.equal(refusedAgain.errorReason, PAYMENT_ALREADY_USED);
    assert.ok(!afterRestartBody.includes("sunny"), "the resource is not served to a replay");
    results.replayAfterRestart = {
      status: afterRestart.status,
      errorReason: refusedAgain.errorReason,
      served: afterRestartBody.includes("sunny"),
      settles: v2Seller.facilitator.settles,
    };
    // A new payment to the restarted seller is served.
    const fresh = await paying.pay(`${v2Seller.url}/weather`);
    assert.equal(fresh.status, 200, await fresh.clone().text());
    const freshSettlement = decodePaymentResponseHeader(fresh.headers.get("PAYMENT-RESPONSE")!);
    assert.notEqual(freshSettlement.transaction, settlement.transaction);
    results.paidAfterRestart = { status: fresh.status, settles: v2Seller.facilitator.settles };

    // A buyer without collateral: 402 with Core's reason.
    const poor = await buyerFor(poorBuyer.privateKey);
    const refused = await poor.pay(`${v2Seller.url}/weather`);
    const refusal = decodePaymentResponseHeader(refused.headers.get("PAYMENT-RESPONSE")!);
    assert.equal(refused.status, 402);
    assert.equal(refusal.success, false);
    assert.equal(refusal.errorReason, "insufficient_collateral");
    results.refusal = { status: refused.status, errorReason: refusal.errorReason };

    // x402 v1 on the paywall.
    const v1Response = await paying.pay(`${v1Seller.url}/weather`);
    assert.equal(v1Response.status, 200, await v1Response.clone().text());
    assert.deepEqual(await v1Response.json(), { weather: "sunny", x402: 1 });
    const v1Settlement = decodePaymentResponseHeader(v1Response.headers.get("X-PAYMENT-RESPONSE")!);
    assert.equal(v1Settlement.success, true);
    results.v1 = { status: v1Response.status, guarantee: v1Settlement.transaction };
    return results;
  } finally {
    for (const server of servers) await close(server);
    for (const ledger of ledgers) ledger.close();
    rmSync(ledgerDir, { recursive: true, force: true });
    await devnet.stop();
  }
}

main().then(
  (results) => console.log(JSON.stringify({ ok: true, ...results })),
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
