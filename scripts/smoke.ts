/**
 * `npm run smoke`: checks a running devnet end to end.
 *
 *   1. Core and the facilitator are healthy (URLs from deployments/localhost.json);
 *   2. a dev payer deposits ETH collateral in the Vault, on chain;
 *   3. Core credits it (its chain indexer follows the Vault's events): waited for, with a clear failure;
 *   4. an x402 purchase on the official x402 packages: a seller (@x402/express `paymentMiddleware` with
 *      Surety's `svc-credit` server scheme, in this process, on a free port) sells GET /smoke through the
 *      devnet's facilitator; the buyer pays with @x402/fetch and Surety's client scheme;
 *   5. the certificate is printed and verified: Core's BLS signature, and the claims bind this payment.
 *
 * Environment: SURETY_SMOKE_DEPLOYMENT (default deployments/localhost.json), SURETY_SMOKE_PAYER (dev account
 * index, default 1), SURETY_SMOKE_SELLER (dev account index, default 2), SURETY_SMOKE_CREDIT_TIMEOUT_SECONDS (30).
 */
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { paymentMiddleware } from "@x402/express";
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import express from "express";
import { JsonRpcProvider, Wallet, formatEther, parseEther } from "ethers";
import { systemClock } from "../facilitator/clock";
import { coreFetch } from "../facilitator/core-http";
import { CoreSession } from "../facilitator/core-session";
import { publicKeyFromArray } from "../sdk/bls";
import {
  certificateMatchesRequest,
  decodeCertificateClaims,
  verifyCertificateSignature,
} from "../sdk/certificate";
import { guaranteeId } from "../sdk/ids";
import { ZERO_ADDRESS } from "../sdk/wire";
import { decodePaymentHeader } from "../sdk/x402";
import {
  SCHEME,
  SuretyServerScheme,
  certificateOfSettlement,
  suretyClientSchemeFromCore,
  suretyPrice,
} from "../sdk/kits/x402-scheme";
import { Vault__factory } from "../typechain-types";
import { devAccount } from "./devnet/accounts";
import type { DevnetDeploymentFile } from "./devnet/contracts";

const PRICE_WEI = 1_000_000_000_000n; // 10^-6 ETH per request
const DEPOSIT_WEI = parseEther("0.01");

class SmokeFailure extends Error {
  override readonly name = "SmokeFailure";
}

function step(message: string): void {
  process.stdout.write(`[smoke] ${message}\n`);
}

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]+$/.test(raw))
    throw new SmokeFailure(`${name}: must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

async function expectHealthy(url: string, what: string): Promise<void> {
  let status: number;
  try {
    status = (await fetch(url, { signal: AbortSignal.timeout(5_000) })).status;
  } catch (error) {
    throw new SmokeFailure(
      `${what} at ${url} does not answer (${(error as Error).message}); is \`npm run devnet\` running?`,
    );
  }
  if (status !== 200) throw new SmokeFailure(`${what} at ${url} answered ${status}`);
}

async function main(): Promise<void> {
  const file = path.resolve(
    process.env.SURETY_SMOKE_DEPLOYMENT ?? path.join("deployments", "localhost.json"),
  );
  let deployment: DevnetDeploymentFile;
  try {
    deployment = JSON.parse(readFileSync(file, "utf8")) as DevnetDeploymentFile;
  } catch (error) {
    throw new SmokeFailure(
      `cannot read ${file} (${(error as Error).message}); start the devnet first: npm run devnet`,
    );
  }
  if (!deployment.urls)
    throw new SmokeFailure(`${file} has no "urls": it was not written by the devnet script`);
  const { rpc, core: coreUrl, facilitator: facilitatorUrl } = deployment.urls;

  await expectHealthy(`${coreUrl}/core/health`, "Core");
  await expectHealthy(`${facilitatorUrl}/health`, "the facilitator");
  step(`Core ${coreUrl} and facilitator ${facilitatorUrl}: healthy`);

  const provider = new JsonRpcProvider(rpc, deployment.chainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 100;
  const payer = new Wallet(devAccount(envInt("SURETY_SMOKE_PAYER", 1)).privateKey, provider);
  const seller = devAccount(envInt("SURETY_SMOKE_SELLER", 2)).address;
  const session = new CoreSession(coreFetch(coreUrl, 10_000), payer, systemClock);
  const fetchCore = coreFetch(coreUrl, 10_000);

  /** Core's `deposited` and `locked` of the payer in ETH. */
  const coreView = async (): Promise<{ deposited: bigint; locked: bigint }> => {
    const bearer = await session.accessToken();
    const answer = await fetchCore({ method: "GET", path: `/core/users/${payer.address}/balances`, bearer });
    if (answer.status !== 200)
      throw new SmokeFailure(`Core's balances answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    const rows = (answer.body as { balances: { asset_address: string; deposited: string; locked: string }[] })
      .balances;
    const eth = rows.find((row) => row.asset_address === ZERO_ADDRESS);
    return { deposited: BigInt(eth?.deposited ?? "0"), locked: BigInt(eth?.locked ?? "0") };
  };

  try {
    // 2. Deposit on chain.
    const before = await coreView();
    const vault = Vault__factory.connect(deployment.contracts.Vault.address, payer);
    const tx = await vault.deposit({ value: DEPOSIT_WEI });
    const receipt = await tx.wait();
    step(
      `payer ${payer.address} deposited ${formatEther(DEPOSIT_WEI)} ETH: tx ${tx.hash} (block ${receipt?.blockNumber})`,
    );

    // 3. Core credits it.
    const timeoutSeconds = envInt("SURETY_SMOKE_CREDIT_TIMEOUT_SECONDS", 30);
    const deadline = Date.now() + timeoutSeconds * 1000;
    let view = before;
    while (view.deposited < before.deposited + DEPOSIT_WEI) {
      if (Date.now() > deadline) {
        throw new SmokeFailure(
          `Core did not credit the deposit within ${timeoutSeconds} s (Core sees ${view.deposited} wei deposited, ` +
            `expected at least ${before.deposited + DEPOSIT_WEI}): Core's chain indexer is not following the ` +
            "Vault's Deposited events (not built or not started in this Core?), so no guarantee can be issued",
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      view = await coreView();
    }
    step(
      `Core credited the deposit: ${formatEther(view.deposited)} ETH deposited, ${view.locked} wei locked`,
    );

    // 4. x402 purchase through a real seller, facilitator and Core.
    const network = `eip155:${deployment.chainId}` as Network;
    const resourceServer = new x402ResourceServer(
      new HTTPFacilitatorClient({ url: facilitatorUrl }),
    ).register(network, new SuretyServerScheme());
    const app = express();
    app.use(
      paymentMiddleware(
        {
          "GET /smoke": {
            accepts: {
              scheme: SCHEME,
              network,
              payTo: seller,
              price: suretyPrice({ asset: ZERO_ADDRESS, amount: PRICE_WEI }),
            },
            description: "smoke test",
          },
        },
        resourceServer,
      ),
    );
    app.get("/smoke", (_req, res) => {
      res.json({ ok: true });
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
    const sellerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/smoke`;
    try {
      const scheme = await suretyClientSchemeFromCore(coreUrl, {
        signer: payer,
        maxAmountPerRequest: { [ZERO_ADDRESS]: PRICE_WEI.toString() },
      });
      let paymentHeader: string | null = null;
      const recording = (input: string | URL | Request, init?: RequestInit) => {
        const request = new Request(input, init);
        paymentHeader = request.headers.get("PAYMENT-SIGNATURE") ?? paymentHeader;
        return fetch(request);
      };
      const paidFetch = wrapFetchWithPaymentFromConfig(recording, {
        schemes: [{ network, client: scheme }],
        spendControls: scheme.spendControls(),
      });
      const response = await paidFetch(sellerUrl);
      const text = await response.text();
      if (response.status !== 200) throw new SmokeFailure(`the seller answered ${response.status}: ${text}`);
      const settlementHeader = response.headers.get("PAYMENT-RESPONSE");
      const certificate =
        settlementHeader === null
          ? null
          : certificateOfSettlement(decodePaymentResponseHeader(settlementHeader));
      if (paymentHeader === null || certificate === null) {
        throw new SmokeFailure("paid response without a payment or a settlement certificate");
      }
      const claims = decodePaymentHeader(paymentHeader).payload.claims;
      step(`purchase: ${sellerUrl} answered 200 ${text}`);

      // 5. Verify the certificate.
      const params = (await (await fetch(`${coreUrl}/core/public-params`)).json()) as {
        public_key: number[];
      };
      const signatureOk = verifyCertificateSignature(publicKeyFromArray(params.public_key), certificate);
      const decoded = decodeCertificateClaims(certificate.claims);
      const ids = { chainId: deployment.chainId, vault: deployment.contracts.Vault.address };
      const bound = certificateMatchesRequest(decoded, claims, ids);
      const id = guaranteeId(ids, payer.address, claims.reqId).toLowerCase();
      const idOk = decoded.guaranteeId === id;
      process.stdout.write(JSON.stringify({ guarantee_id: id, certificate }, null, 2) + "\n");
      if (!signatureOk)
        throw new SmokeFailure("the certificate's BLS signature does not verify against Core's public key");
      if (!bound || !idOk) throw new SmokeFailure("the certificate does not bind the payment that was made");
      step("certificate: BLS signature verifies against Core's public key and binds this payment");
      const after = await coreView();
      step(`Core now locks ${after.locked} wei of the payer's ETH (was ${view.locked})`);
      if (after.locked < view.locked + PRICE_WEI)
        throw new SmokeFailure("Core did not lock the guarantee's amount");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    step("OK");
  } finally {
    provider.destroy();
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(
        `[smoke] FAILED: ${error instanceof SmokeFailure ? error.message : String((error as Error).stack ?? error)}`,
      );
      process.exit(1);
    },
  );
}
