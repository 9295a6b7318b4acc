/**
 * A seller that sells `GET /weather` for x402 `svc-credit` payments on the
 * official x402 middleware (`@x402/express`), with Surety's server scheme.
 *
 *   npx ts-node --transpile-only examples/seller.ts
 *
 * Environment (defaults fit the local devnet):
 *   FACILITATOR_URL  http://127.0.0.1:8402 (Surety's facilitator; it also tells the scheme the Vault)
 *   SELLER_PORT      4021
 *   PAY_TO           Hardhat account #2 (0x3C44…93BC): who the guarantees pay
 *   NETWORK          eip155:31337
 *   ASSET            0x000…000 (ETH); any token Core lists in GET /core/tokens
 *   PRICE            1000000000000 (base units of ASSET per request)
 *   CERTIFICATES     .data/seller-certificates.jsonl (where settled certificates are appended)
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { paymentMiddleware } from "@x402/express";
import express from "express";
import { ZERO_ADDRESS } from "../sdk/wire";
import { SCHEME, SuretyServerScheme, certificateOfSettlement, suretyPrice } from "../sdk/kits/x402-scheme";

const facilitatorUrl = process.env.FACILITATOR_URL ?? "http://127.0.0.1:8402";
const port = Number(process.env.SELLER_PORT ?? 4021);
const payTo = process.env.PAY_TO ?? "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const network = (process.env.NETWORK ?? "eip155:31337") as Network;
const asset = process.env.ASSET ?? ZERO_ADDRESS;
const price = process.env.PRICE ?? "1000000000000";
const certificates = process.env.CERTIFICATES ?? ".data/seller-certificates.jsonl";

const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl }))
  .register(network, new SuretyServerScheme())
  // The certificate is what the Vault pays against: keep it. (Hook failures are logged by @x402/core.)
  .onAfterSettle(async ({ result, paymentPayload }) => {
    const certificate = certificateOfSettlement(result);
    if (certificate === null) return;
    mkdirSync(dirname(certificates), { recursive: true });
    const line = {
      guaranteeId: result.transaction,
      payer: result.payer,
      certificate,
      payload: paymentPayload.payload,
    };
    appendFileSync(certificates, JSON.stringify(line) + "\n");
  });

const app = express();
app.disable("x-powered-by");
app.use(
  paymentMiddleware(
    {
      "GET /weather": {
        accepts: { scheme: SCHEME, network, payTo, price: suretyPrice({ asset, amount: price }) },
        description: "Today's weather",
        mimeType: "application/json",
      },
    },
    server,
  ),
);

app.get("/weather", (_req, res) => {
  console.log("served /weather");
  res.json({ city: "Lisbon", forecast: "sunny", temperatureC: 24 });
});

app.listen(port, "127.0.0.1", () => {
  console.log(`seller on http://127.0.0.1:${port}/weather: ${price} of ${asset} per request to ${payTo}`);
  console.log(`facilitator ${facilitatorUrl}; certificates appended to ${certificates}`);
});
