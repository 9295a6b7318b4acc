/**
 * Replay safety across seller restarts and replicas (issue 27), every component real and on its own
 * port: buyer (`@x402/fetch` + `SuretyClientScheme`) → seller (`@x402/express` + `SuretyServerScheme`,
 * a `PaymentLedger`) → a pass-through proxy that counts `/settle` calls and can lose an answer →
 * facilitator → Core (SQLite, contracts on the Hardhat chain).
 *
 * A seller "restart" stops its HTTP server, drops every object of it (resource server, scheme, ledger;
 * the SQLite ledger's file is closed) and starts a new one on a new port: what survives is only what is
 * on disk, as across a process restart. Checked each time: what the buyer gets, how often the route
 * handler ran, how often the facilitator was asked to settle, and that Core locked the amount once.
 * Nothing waits on time: the lost answer is a connection the proxy closes after the facilitator answered.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient, type RoutesConfig, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { paymentMiddleware } from "@x402/express";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { expect } from "chai";
import { Wallet } from "ethers";
import express from "express";
import { guaranteeId } from "../../sdk/ids";
import {
  MemoryPaymentLedger,
  PAYMENT_ALREADY_USED,
  type PaymentLedger,
  SCHEME,
  SuretyClientScheme,
  SuretyServerScheme,
  certificateOfSettlement,
  domainFromPublicParams,
  settlementAlreadyIssued,
  suretyPrice,
} from "../../sdk/kits/x402-scheme";
import { SqlitePaymentLedger } from "../../sdk/kits/x402-scheme/sqlite-ledger";
import { formatNetwork } from "../../sdk/wire";
import { decodeBase64Json, parsePaymentPayload } from "../../sdk/x402";
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

const payer = new Wallet("0x" + "c1".repeat(32));
const sellerWallet = new Wallet("0x" + "c3".repeat(32));
const facilitatorWallet = new Wallet("0x" + "c4".repeat(32));
const TUSD = TEST_DEPLOYMENT.tokens[0].address;
const NETWORK = formatNetwork(TEST_CHAIN_ID) as Network;
const PRICE = 1_000n;
const DEPOSIT = 1_000_000n;

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

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Forwards everything to the facilitator and counts `/settle` calls; with `loseNextSettle` it forwards
 * the next settle, waits for the facilitator's answer (Core has issued by then) and closes the seller's
 * connection instead of answering: a settle answer lost on the way, as after a timeout.
 */
class SettleProxy {
  settles = 0;
  loseNextSettle = false;
  private server: Server | null = null;
  url = "";

  constructor(private readonly target: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.url = await listen(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const settle = req.method === "POST" && req.url === "/settle";
    if (settle) this.settles++;
    const answer = await fetch(this.target + req.url, {
      method: req.method,
      headers: { "content-type": "application/json" },
      body: req.method === "GET" ? undefined : body,
    });
    const text = await answer.text();
    if (settle && this.loseNextSettle) {
      this.loseNextSettle = false;
      res.socket?.destroy();
      return;
    }
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(text);
  }

  async stop(): Promise<void> {
    if (this.server !== null) await close(this.server);
  }
}

interface Seller {
  url: string;
  stop(): Promise<void>;
}

describe("x402 replay safety across seller restarts and replicas (PaymentLedger, settle_attempt)", function () {
  let dir: ReturnType<typeof tempDir>;
  let core: CoreServer;
  let facilitator: FacilitatorServer;
  let proxy: SettleProxy;
  let domain: ReturnType<typeof domainFromPublicParams>;
  const running = new Set<Seller>();
  /** Route handler runs, over every seller instance. */
  let served = 0;

  before(async function () {
    const contracts = await deployTestContracts();
    dir = tempDir();
    core = await startCoreServer(testConfig(dir.path, { facilitators: [facilitatorWallet.address] }), {
      logger: silentLogger(),
      chainClock: systemClock, // no indexer: the deposit is credited by hand, the wall clock is chain time
      ...testCoreDeps(contracts.deployment),
    });
    await core.context.store.collateral.creditDeposit(
      payer.address,
      TUSD,
      DEPOSIT,
      Math.floor(Date.now() / 1000),
    );
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
    proxy = new SettleProxy(facilitator.url);
    await proxy.start();
    domain = domainFromPublicParams(await (await fetch(`${core.url}/core/public-params`)).json());
  });

  after(async function () {
    for (const seller of running) await seller.stop();
    await proxy?.stop();
    await facilitator?.close();
    await core?.close();
    dir?.remove();
  });

  /** A seller process: express + the official middleware + the scheme with `ledger`. */
  async function startSeller(ledger: PaymentLedger, onStop: () => void = () => {}): Promise<Seller> {
    const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: proxy.url })).register(
      NETWORK,
      new SuretyServerScheme({ ledger }),
    );
    const routes: RoutesConfig = {
      "GET /weather": {
        accepts: {
          scheme: SCHEME,
          network: NETWORK,
          payTo: sellerWallet.address,
          price: suretyPrice({ asset: TUSD, amount: PRICE }),
        },
        description: "Weather report",
      },
    };
    const app = express();
    app.use(paymentMiddleware(routes, resourceServer));
    app.get("/weather", (_req, res) => {
      served++;
      res.json({ weather: "sunny" });
    });
    const server = createServer(app);
    const url = await listen(server);
    const seller: Seller = {
      url,
      stop: async () => {
        running.delete(seller);
        await close(server);
        onStop();
      },
    };
    running.add(seller);
    return seller;
  }

  async function startSqliteSeller(file: string): Promise<Seller> {
    const ledger = new SqlitePaymentLedger(join(dir.path, file));
    return startSeller(ledger, () => ledger.close());
  }

  /** A buyer that pays once and keeps the PAYMENT-SIGNATURE header it sent. */
  async function payOnce(sellerUrl: string): Promise<{ response: Response; header: string }> {
    const sent: Headers[] = [];
    const recording = (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      sent.push(request.headers);
      return fetch(request);
    };
    const scheme = new SuretyClientScheme({ signer: payer, domain, maxAmountPerRequest: { [TUSD]: PRICE } });
    const pay = wrapFetchWithPaymentFromConfig(recording, {
      schemes: [{ network: NETWORK, client: scheme }],
      spendControls: scheme.spendControls(),
    });
    const response = await pay(`${sellerUrl}/weather`);
    const header = sent.map((h) => h.get("PAYMENT-SIGNATURE")).find((h) => h !== null);
    expect(header, "the buyer sent a payment").to.be.a("string");
    return { response, header: header! };
  }

  function replay(sellerUrl: string, header: string): Promise<Response> {
    return fetch(`${sellerUrl}/weather`, { headers: { "PAYMENT-SIGNATURE": header } });
  }

  async function locked(): Promise<bigint> {
    return (await core.context.store.collateral.getCollateral(payer.address, TUSD)).locked;
  }

  async function expectStoredOnce(header: string): Promise<void> {
    const { claims } = parsePaymentPayload(decodeBase64Json(header, "header")).payload;
    const id = guaranteeId(
      { chainId: TEST_CHAIN_ID, vault: TEST_DEPLOYMENT.vault },
      payer.address,
      claims.reqId,
    );
    expect(await core.context.store.guarantees.getGuarantee(id)).to.deep.include({
      state: "FINALIZED_PAYABLE",
    });
  }

  function expectRefusedAsUsed(response: Response): void {
    expect(response.status).to.equal(402);
    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE")!);
    expect(settlement).to.include({ success: false, errorReason: PAYMENT_ALREADY_USED });
  }

  it("SQLite ledger: pay, restart the seller, replay → 402 payment_already_used, not settled, not served, locked once", async function () {
    let seller = await startSqliteSeller("seller-a.db");
    const lockedBefore = await locked();
    const { response, header } = await payOnce(seller.url);
    expect(response.status).to.equal(200);
    const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE")!);
    expect(certificateOfSettlement(settlement)).to.not.equal(null);
    expect(settlementAlreadyIssued(settlement)).to.equal(false);
    expect(await locked()).to.equal(lockedBefore + PRICE);
    const servedOnce = served;
    const settlesOnce = proxy.settles;

    await seller.stop();
    seller = await startSqliteSeller("seller-a.db");
    expectRefusedAsUsed(await replay(seller.url, header));
    expect(proxy.settles, "refused by the ledger, before any settlement").to.equal(settlesOnce);
    expect(served).to.equal(servedOnce);
    expect(await locked()).to.equal(lockedBefore + PRICE);
    await expectStoredOnce(header);

    // A second replica on the same file knows it too.
    const replica = await startSqliteSeller("seller-a.db");
    expectRefusedAsUsed(await replay(replica.url, header));
    expect(proxy.settles).to.equal(settlesOnce);
    expect(served).to.equal(servedOnce);
    await replica.stop();
    await seller.stop();
  });

  it("memory ledger or a replica without the ledger: the facilitator refuses the replay (settle_attempt first), nothing served", async function () {
    let seller = await startSeller(new MemoryPaymentLedger());
    const lockedBefore = await locked();
    const { response, header } = await payOnce(seller.url);
    expect(response.status).to.equal(200);
    const servedOnce = served;

    await seller.stop(); // the memory ledger is gone with it
    seller = await startSeller(new MemoryPaymentLedger());
    const settlesBefore = proxy.settles;
    expectRefusedAsUsed(await replay(seller.url, header));
    expect(proxy.settles, "asked the facilitator, which refused").to.equal(settlesBefore + 1);
    // Now this seller's ledger has it as used: the next replay stops at the ledger.
    expectRefusedAsUsed(await replay(seller.url, header));
    expect(proxy.settles).to.equal(settlesBefore + 1);
    const replica = await startSeller(new MemoryPaymentLedger());
    expectRefusedAsUsed(await replay(replica.url, header));
    expect(served).to.equal(servedOnce);
    expect(await locked()).to.equal(lockedBefore + PRICE);
    await replica.stop();
    await seller.stop();
  });

  it("a settle answer lost (as after a timeout), the seller restarted: the retry succeeds once, then replays are refused", async function () {
    let seller = await startSqliteSeller("seller-b.db");
    const lockedBefore = await locked();
    const servedBefore = served;
    proxy.loseNextSettle = true;
    const { response, header } = await payOnce(seller.url);
    expect(response.status, "the settlement's answer never reached the seller").to.not.equal(200);
    expect(served).to.equal(servedBefore);
    // Core issued it and locked the amount, once.
    expect(await locked()).to.equal(lockedBefore + PRICE);
    await expectStoredOnce(header);

    await seller.stop();
    seller = await startSqliteSeller("seller-b.db");
    const retried = await replay(seller.url, header);
    expect(retried.status).to.equal(200);
    expect(await retried.json()).to.deep.equal({ weather: "sunny" });
    const settlement = decodePaymentResponseHeader(retried.headers.get("PAYMENT-RESPONSE")!);
    expect(settlement.success).to.equal(true);
    expect(settlementAlreadyIssued(settlement), "issued by the lost settlement").to.equal(true);
    expect(served).to.equal(servedBefore + 1);
    expect(await locked()).to.equal(lockedBefore + PRICE);

    expectRefusedAsUsed(await replay(seller.url, header));
    await seller.stop();
    seller = await startSqliteSeller("seller-b.db");
    expectRefusedAsUsed(await replay(seller.url, header));
    expect(served).to.equal(servedBefore + 1);
    expect(await locked()).to.equal(lockedBefore + PRICE);
    await seller.stop();
  });

  it("a settle answer lost with a memory ledger, retried without a restart: served once", async function () {
    const seller = await startSeller(new MemoryPaymentLedger());
    const lockedBefore = await locked();
    const servedBefore = served;
    proxy.loseNextSettle = true;
    const { response, header } = await payOnce(seller.url);
    expect(response.status).to.not.equal(200);
    const retried = await replay(seller.url, header);
    expect(retried.status).to.equal(200);
    expectRefusedAsUsed(await replay(seller.url, header));
    expect(served).to.equal(servedBefore + 1);
    expect(await locked()).to.equal(lockedBefore + PRICE);
    await seller.stop();
  });
});
