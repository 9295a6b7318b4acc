/**
 * A seller that sells `GET /weather` for x402 `svc-credit` payments.
 *
 *   npx ts-node --transpile-only examples/seller.ts
 *
 * Environment (defaults fit the local devnet):
 *   FACILITATOR_URL  http://127.0.0.1:8402
 *   SELLER_PORT      4021
 *   PAY_TO           Hardhat account #2 (0x3C44…93BC): who the guarantees pay
 *   NETWORK          eip155:31337
 *   ASSET            0x000…000 (ETH); any token Core lists in GET /core/tokens
 *   PRICE            1000000000000 (base units of ASSET per request)
 *   X402_VERSION     2 (version of the 402 answer; payments of both versions are accepted)
 *   CERTIFICATES     .data/seller-certificates.jsonl (where settled certificates are appended)
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import express from "express";
import { paywall } from "../sdk/paywall";
import { ZERO_ADDRESS } from "../sdk/wire";

const facilitatorUrl = process.env.FACILITATOR_URL ?? "http://127.0.0.1:8402";
const port = Number(process.env.SELLER_PORT ?? 4021);
const payTo = process.env.PAY_TO ?? "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const network = process.env.NETWORK ?? "eip155:31337";
const asset = process.env.ASSET ?? ZERO_ADDRESS;
const price = process.env.PRICE ?? "1000000000000";
const x402Version = process.env.X402_VERSION === "1" ? 1 : 2;
const certificates = process.env.CERTIFICATES ?? ".data/seller-certificates.jsonl";

const app = express();
app.disable("x-powered-by");
app.use(
  paywall({
    facilitatorUrl,
    payTo,
    network,
    x402Version,
    routes: { "GET /weather": { price, asset, description: "Today's weather" } },
    // The certificate is what the Vault pays against: store it before serving.
    onSettled: (settlement) => {
      mkdirSync(dirname(certificates), { recursive: true });
      const { guaranteeId, payer, claims, certificate } = settlement;
      appendFileSync(certificates, JSON.stringify({ guaranteeId, payer, claims, certificate }) + "\n");
    },
    onError: (error) => console.error("paywall:", error instanceof Error ? error.message : error),
  }),
);

app.get("/weather", (_req, res) => {
  const { guaranteeId, payer } = res.locals.surety;
  console.log(`served /weather to ${payer}, guarantee ${guaranteeId}`);
  res.json({ city: "Lisbon", forecast: "sunny", temperatureC: 24 });
});

app.listen(port, "127.0.0.1", () => {
  console.log(`seller on http://127.0.0.1:${port}/weather: ${price} of ${asset} per request to ${payTo}`);
  console.log(`facilitator ${facilitatorUrl}; certificates appended to ${certificates}`);
});
