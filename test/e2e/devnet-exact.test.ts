/**
 * `npm run devnet -- --with-exact` through `startDevnet({ withExact: true })`: the devnet deploys the
 * EIP-3009 test token, mints it to the dev accounts and runs the official x402 `exact` facilitator
 * (@x402/core + @x402/evm) on a port of its own. The README's "keep your exact option and add svc-credit
 * beside it" then runs as written: one seller on @x402/express offers both on one route, with both
 * facilitators; a buyer on @x402/fetch with the exact scheme pays by `transferWithAuthorization` (the
 * token moves on chain), another with Surety's scheme pays with a guarantee. Stopping frees every port.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme as ExactClientScheme } from "@x402/evm/exact/client";
import { ExactEvmScheme as ExactServerScheme } from "@x402/evm/exact/server";
import { paymentMiddleware } from "@x402/express";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { Contract, JsonRpcProvider, Wallet, parseEther } from "ethers";
import express from "express";
import { privateKeyToAccount } from "viem/accounts";
import { type RunningDevnet, startDevnet } from "../../packages/devnet/src";
import { isPortFree } from "../../scripts/devnet/ports";
import {
  SCHEME,
  SuretyServerScheme,
  suretyClientSchemeFromCore,
  suretyPrice,
} from "../../sdk/kits/x402-scheme";
import { ZERO_ADDRESS } from "../../sdk/wire";

const EXACT_PRICE = 1_000n; // xUSD base units
const SURETY_PRICE = 1_000n; // wei

describe("devnet --with-exact: the official exact facilitator beside svc-credit", function () {
  this.timeout(5 * 60_000);
  let devnet: RunningDevnet | undefined;
  let server: Server | undefined;

  after(async function () {
    this.timeout(90_000);
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise((resolve) => server!.close(resolve));
    }
    await devnet?.stop();
  });

  it("starts it, prints it, and one seller takes an exact payment and an svc-credit one", async () => {
    const lines: string[] = [];
    devnet = await startDevnet({ cycleSeconds: 10, withExact: true, onOutput: (line) => lines.push(line) });
    const exact = devnet.exact!;
    expect(exact, "startDevnet returns the exact facilitator").to.not.equal(undefined);
    expect(devnet.urls.exact).to.equal(exact.url);
    expect(exact.token).to.include({ name: "Exact USD", symbol: "xUSD", version: "2", decimals: 18 });
    const ready = lines.find((line) => line.includes("devnet ready:"))!;
    expect(ready).to.include(`exact=${exact.url} exact_token=${exact.token.address}`);
    expect(lines.join("\n")).to.match(/Exact \(x402\)\s+http:\/\/127\.0\.0\.1:\d+\s+pid \d+/);
    expect(devnet.deployment.urls.exact).to.equal(exact.url);
    expect(devnet.deployment.exactToken).to.deep.equal(exact.token);
    // The exact token is not Surety collateral: Core's token list is unchanged.
    expect(devnet.deployment.tokens.map((t) => t.symbol)).to.deep.equal(["tUSD", "tETH"]);

    const network = devnet.network as Network;
    const supported = (await (await fetch(`${exact.url}/supported`)).json()) as {
      kinds: { scheme: string; network: string }[];
    };
    expect(supported.kinds.some((kind) => kind.scheme === "exact" && kind.network === network)).to.equal(
      true,
    );

    const provider = new JsonRpcProvider(devnet.urls.rpc, devnet.chainId, { staticNetwork: true });
    try {
      const [exactBuyer, suretyBuyer, seller] = [devnet.accounts[4], devnet.accounts[1], devnet.accounts[2]];
      const token = new Contract(
        exact.token.address,
        ["function balanceOf(address) view returns (uint256)"],
        provider,
      );
      const balance = (address: string) => token.getFunction("balanceOf")(address) as Promise<bigint>;
      const grant = 1_000_000n * 10n ** 18n;
      expect(await balance(exactBuyer.address)).to.equal(grant);
      expect(await balance(seller.address)).to.equal(grant);
      const vault = new Contract(
        devnet.deployment.contracts.Vault.address,
        ["function deposit() payable"],
        new Wallet(suretyBuyer.privateKey, provider),
      );
      await (await vault.getFunction("deposit")({ value: parseEther("0.01") })).wait();

      // The README's seller: your exact option and svc-credit beside it, each with its facilitator.
      const resourceServer = new x402ResourceServer([
        new HTTPFacilitatorClient({ url: exact.url }),
        new HTTPFacilitatorClient({ url: devnet.urls.facilitator }),
      ])
        .register(network, new ExactServerScheme())
        .register(network, new SuretyServerScheme());
      const exactOption = {
        scheme: "exact",
        network,
        payTo: seller.address,
        price: {
          asset: exact.token.address,
          amount: EXACT_PRICE.toString(),
          extra: { name: exact.token.name, version: exact.token.version },
        },
      };
      const svcCredit = {
        scheme: SCHEME,
        network,
        payTo: seller.address,
        price: suretyPrice({ asset: ZERO_ADDRESS, amount: SURETY_PRICE }),
      };
      const app = express();
      app.use(paymentMiddleware({ "GET /weather": { accepts: [exactOption, svcCredit] } }, resourceServer));
      app.get("/weather", (_req, res) => void res.json({ weather: "sunny" }));
      server = createServer(app);
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/weather`;

      // An exact buyer: @x402/fetch with the official exact client scheme.
      const exactScheme = new ExactClientScheme(privateKeyToAccount(exactBuyer.privateKey as `0x${string}`));
      const payExact = wrapFetchWithPaymentFromConfig(fetch, {
        schemes: [{ network, client: exactScheme }],
        spendControls: {
          allowedAssets: [
            { network, asset: exact.token.address, maxAmountPerPayment: EXACT_PRICE.toString() },
          ],
        },
      });
      const paidExact = await payExact(url);
      expect(paidExact.status, await paidExact.clone().text()).to.equal(200);
      expect(await paidExact.json()).to.deep.equal({ weather: "sunny" });
      const exactSettlement = decodePaymentResponseHeader(paidExact.headers.get("PAYMENT-RESPONSE")!);
      expect(exactSettlement.success).to.equal(true);
      const receipt = await provider.getTransactionReceipt(exactSettlement.transaction);
      expect(receipt?.status).to.equal(1);
      expect(await balance(exactBuyer.address)).to.equal(grant - EXACT_PRICE);
      expect(await balance(seller.address)).to.equal(grant + EXACT_PRICE);

      // An svc-credit buyer on the same route, once Core has indexed the deposit.
      const suretyScheme = await suretyClientSchemeFromCore(devnet.urls.core, {
        signer: new Wallet(suretyBuyer.privateKey),
        maxAmountPerRequest: { [ZERO_ADDRESS]: SURETY_PRICE },
      });
      const paySurety = wrapFetchWithPaymentFromConfig(fetch, {
        schemes: [{ network, client: suretyScheme }],
        spendControls: suretyScheme.spendControls(),
      });
      let paidSurety: Response;
      for (let attempt = 0; ; attempt++) {
        paidSurety = await paySurety(url);
        if (paidSurety.status === 200 || attempt >= 40) break;
        await paidSurety.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(paidSurety.status, await paidSurety.clone().text()).to.equal(200);
      const suretySettlement = decodePaymentResponseHeader(paidSurety.headers.get("PAYMENT-RESPONSE")!);
      expect(suretySettlement.success).to.equal(true);
      expect(suretySettlement.transaction).to.match(/^0x[0-9a-f]{64}$/i);
      // svc-credit moved no token: the exact balances are as the exact payment left them.
      expect(await balance(seller.address)).to.equal(grant + EXACT_PRICE);
    } finally {
      provider.destroy();
    }

    const ports = [devnet.urls.rpc, devnet.urls.core, devnet.urls.facilitator, exact.url].map((u) =>
      Number(new URL(u).port),
    );
    server!.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    await devnet.stop();
    for (const port of ports) expect(await isPortFree("127.0.0.1", port), `port ${port}`).to.equal(true);
  });
});
