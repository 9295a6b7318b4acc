/**
 * A buyer that fetches a paid resource with the official `@x402/fetch` and
 * Surety's client scheme: the wrapped fetch answers the 402, signs one
 * guarantee under the buyer's limit and retries once.
 *
 *   npx ts-node --transpile-only examples/buyer.ts [url]
 *
 * Environment (defaults fit the local devnet):
 *   SELLER_URL         http://127.0.0.1:4021/weather (or the first argument)
 *   CORE_URL           http://127.0.0.1:8080 (the EIP-712 domain comes from GET /core/public-params)
 *   BUYER_PRIVATE_KEY  Hardhat account #1 (0x7099…79C8); never a key holding real funds in a file
 *   ASSET              0x000…000 (ETH)
 *   MAX_AMOUNT         10000000000000 (most the buyer pays per request, base units of ASSET)
 *   SIGNING_SCHEME     eip712 (or eip191)
 *
 * The buyer needs collateral in the Vault for Core to issue guarantees.
 */
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import type { Network } from "@x402/core/types";
import { Wallet } from "ethers";
import { ZERO_ADDRESS } from "../sdk/wire";
import { certificateOfSettlement, suretyClientSchemeFromCore } from "../sdk/kits/x402-scheme";

const HARDHAT_ACCOUNT_1 = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

async function main(): Promise<void> {
  const url = process.argv[2] ?? process.env.SELLER_URL ?? "http://127.0.0.1:4021/weather";
  const coreUrl = process.env.CORE_URL ?? "http://127.0.0.1:8080";
  const signer = new Wallet(process.env.BUYER_PRIVATE_KEY ?? HARDHAT_ACCOUNT_1);
  const asset = process.env.ASSET ?? ZERO_ADDRESS;
  const maxAmount = process.env.MAX_AMOUNT ?? "10000000000000";
  const signingScheme = process.env.SIGNING_SCHEME === "eip191" ? "eip191" : "eip712";

  const scheme = await suretyClientSchemeFromCore(coreUrl, {
    signer,
    maxAmountPerRequest: { [asset]: maxAmount },
    signingScheme,
  });
  const network = scheme.network as Network;
  const paidFetch = wrapFetchWithPaymentFromConfig(fetch, {
    schemes: [
      { network, client: scheme }, // x402 v2 sellers (@x402/express, @x402/hono, …)
      { network, client: scheme, x402Version: 1 }, // x402 v1 sellers (sdk/kits/paywall)
    ],
    spendControls: scheme.spendControls(),
  });

  const response = await paidFetch(url);
  console.log(`${response.status} ${response.statusText}`);
  console.log(await response.text());
  const header = response.headers.get("PAYMENT-RESPONSE") ?? response.headers.get("X-PAYMENT-RESPONSE");
  if (header === null) return;
  const settlement = decodePaymentResponseHeader(header);
  if (settlement.success) {
    console.log(`guarantee ${settlement.transaction}`);
    console.log(`certificate claims ${certificateOfSettlement(settlement)?.claims.slice(0, 66)}…`);
  } else {
    console.log(`not settled: ${settlement.errorReason} (${settlement.errorMessage ?? ""})`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
