/**
 * A buyer that fetches a paid resource: the wrapped fetch answers the 402,
 * signs one guarantee under the buyer's limit and retries once.
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
import { Wallet } from "ethers";
import { PaymentError, paymentReceipt, wrapFetch } from "../sdk/buyer";
import { ZERO_ADDRESS } from "../sdk/wire";

const HARDHAT_ACCOUNT_1 = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

async function main(): Promise<void> {
  const url = process.argv[2] ?? process.env.SELLER_URL ?? "http://127.0.0.1:4021/weather";
  const coreUrl = process.env.CORE_URL ?? "http://127.0.0.1:8080";
  const signer = new Wallet(process.env.BUYER_PRIVATE_KEY ?? HARDHAT_ACCOUNT_1);
  const asset = process.env.ASSET ?? ZERO_ADDRESS;
  const maxAmount = process.env.MAX_AMOUNT ?? "10000000000000";
  const signingScheme = process.env.SIGNING_SCHEME === "eip191" ? "eip191" : "eip712";

  const paidFetch = wrapFetch(fetch, {
    signer,
    coreUrl,
    maxAmountPerRequest: { [asset]: maxAmount },
    signingScheme,
    onPayment: (payment) => {
      const { amount, reqId } = payment.signed.claims;
      console.log(
        `paying ${amount} to ${payment.requirements.payTo} (req_id ${reqId}, x402 v${payment.x402Version})`,
      );
    },
  });

  const response = await paidFetch(url);
  console.log(`${response.status} ${response.statusText}`);
  console.log(await response.text());
  const receipt = paymentReceipt(response);
  if (receipt === undefined) return;
  if (receipt.settlement?.success) {
    console.log(`guarantee ${receipt.payment.guaranteeId}`);
    console.log(`certificate claims ${receipt.settlement.certificate?.claims.slice(0, 66)}…`);
  } else {
    console.log(`not settled: ${receipt.settlement?.error ?? receipt.settlementError}`);
  }
}

main().catch((error: unknown) => {
  if (error instanceof PaymentError) console.error(`no payment (${error.code}): ${error.message}`);
  else console.error(error);
  process.exitCode = 1;
});
