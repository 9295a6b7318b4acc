/**
 * The from-spec `batch-settlement` escrow (contracts/test/batch-settlement/, FOR BENCHMARKING ONLY) driven by the
 * official `@x402/evm` 2.27 client (`@x402/fetch`), server (`@x402/express`) and facilitator, unmodified, on the
 * in-process Hardhat chain: the contracts sit at the canonical addresses the package hard-codes. A purchase opens a
 * channel with an ERC-3009 deposit, the next ones are vouchers checked by the server alone; the server's channel
 * manager claims (`claimWithSignature`) and settles, and the buyer gets the rest back (`refundWithSignature`
 * through `multicall`). Plus the contract's own refusals the official code does not exercise.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme as BatchClientScheme } from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme as BatchServerScheme } from "@x402/evm/batch-settlement/server";
import { paymentMiddleware } from "@x402/express";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { expect } from "chai";
import express from "express";
import { ethers, network } from "hardhat";
import { createPublicClient, custom, defineChain } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { devAccount } from "../../scripts/devnet/accounts";
import {
  CANONICAL,
  batchSettlementFacilitator,
  installBatchSettlementFromSpec,
} from "../../scripts/bench/peers/batch-settlement";
import { BatchSettlementFromSpec__factory, Eip3009Token__factory } from "../../typechain-types";

const PRICE = 1_000n;
const TOKEN_NAME = "Exact USD";

describe("batch-settlement (from-spec escrow) with the official x402 client, server and facilitator", function () {
  const rpc = (method: string, params: unknown[]) => network.provider.request({ method, params });
  const servers: Server[] = [];

  // The official code stamps ERC-3009 authorizations and vouchers with `Date.now()` and the escrow judges them by
  // the block's time. This in-process chain is shared with the other files, which move its time (days ahead after
  // a timelock; behind after a fixture revert, test/support/snapshot-clock.ts). So, for this file, the process's
  // clock is the chain's: the chain is first brought up to the wall clock if it trails, then `Date.now` follows
  // the chain's offset from it. Restored after.
  const realNow = Date.now;
  before(async () => {
    const wall = Math.floor(realNow() / 1000);
    if ((await ethers.provider.getBlock("latest"))!.timestamp < wall) {
      await rpc("evm_setNextBlockTimestamp", [wall]);
      await rpc("evm_mine", []);
    }
    const offsetMs = (await ethers.provider.getBlock("latest"))!.timestamp * 1000 - realNow();
    Date.now = () => realNow() + Math.max(0, offsetMs);
  });

  after(async () => {
    Date.now = realNow;
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  type ClientOptions = ConstructorParameters<typeof BatchClientScheme>[1];

  async function setup(clientOptions: ClientOptions = { depositPolicy: { depositMultiplier: 10 } }) {
    const [deployer] = await ethers.getSigners();
    await installBatchSettlementFromSpec(deployer, rpc);
    const token = await new Eip3009Token__factory(deployer).deploy(TOKEN_NAME, "xUSD");
    const tokenAddress = (await token.getAddress()) as `0x${string}`;
    const { chainId } = await ethers.provider.getNetwork();
    const net = `eip155:${chainId}` as Network;
    const chain = defineChain({
      id: Number(chainId),
      name: "hardhat",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: ["http://unused"] } },
    });
    const transport = custom({ request: ({ method, params }) => rpc(method, params ?? []) });
    const buyerKey = devAccount(7).privateKey as `0x${string}`;
    const buyer = privateKeyToAccount(buyerKey);
    const seller = devAccount(8).address as `0x${string}`;
    await (await token.mint(buyer.address, 10n ** 24n)).wait();

    const { client: facilitatorClient } = batchSettlementFacilitator({
      chain,
      transport,
      network: net,
      signerKey: devAccount(9).privateKey as `0x${string}`,
      authorizerKey: devAccount(10).privateKey as `0x${string}`,
      pollingInterval: 10,
    });
    const serverScheme = new BatchServerScheme(seller, { withdrawDelay: 900 });
    const resourceServer = new x402ResourceServer(facilitatorClient).register(net, serverScheme);
    const app = express();
    app.use(
      paymentMiddleware(
        {
          "GET /paid": {
            accepts: {
              scheme: "batch-settlement",
              network: net,
              payTo: seller,
              price: {
                asset: tokenAddress,
                amount: PRICE.toString(),
                extra: { name: TOKEN_NAME, version: "2" },
              },
            },
          },
        },
        resourceServer,
      ),
    );
    app.get("/paid", (_req, res) => void res.json({ ok: true }));
    const server = createServer(app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/paid`;

    const publicClient = createPublicClient({ chain, transport });
    const clientScheme = new BatchClientScheme(toClientEvmSigner(buyer, publicClient), clientOptions);
    const pay = wrapFetchWithPaymentFromConfig(fetch, {
      schemes: [{ network: net, client: clientScheme }],
      spendControls: {
        allowedAssets: [{ network: net, asset: tokenAddress, maxAmountPerPayment: PRICE.toString() }],
      },
    });
    const escrow = BatchSettlementFromSpec__factory.connect(CANONICAL.batchSettlement, deployer);
    return {
      token,
      tokenAddress,
      net,
      buyer,
      seller,
      serverScheme,
      facilitatorClient,
      pay,
      url,
      escrow,
      clientScheme,
    };
  }

  it("opens a channel, pays with vouchers, claims, settles and refunds through the official code", async function () {
    const {
      token,
      tokenAddress,
      net,
      buyer,
      seller,
      serverScheme,
      facilitatorClient,
      pay,
      url,
      escrow,
      clientScheme,
    } = await setup();
    const before = await token.balanceOf(buyer.address);

    for (let i = 0; i < 4; i++) {
      const response = await pay(url);
      expect(response.status, await response.clone().text()).to.equal(200);
      await response.arrayBuffer();
    }
    // One deposit of 10 × the price (depositMultiplier), four payments as vouchers against it.
    expect(await token.balanceOf(buyer.address)).to.equal(before - 10n * PRICE);
    expect(await token.balanceOf(CANONICAL.batchSettlement)).to.equal(10n * PRICE);
    const channelIds = (await serverScheme.getStorage().list()).map((c) => c.channelId);
    expect(channelIds).to.have.length(1);
    const channelId = channelIds[0] as `0x${string}`;
    const [balance, claimedBefore] = await escrow.channels(channelId);
    expect([balance, claimedBefore]).to.deep.equal([10n * PRICE, 0n]);

    const manager = serverScheme.createChannelManager(facilitatorClient, net, tokenAddress);
    const { claims, settle } = await manager.claimAndSettle();
    expect(claims).to.have.length(1);
    expect(claims[0].vouchers).to.equal(1);
    expect(settle?.transaction).to.match(/^0x[0-9a-f]{64}$/);
    expect((await escrow.channels(channelId))[1]).to.equal(4n * PRICE);
    expect(await token.balanceOf(seller)).to.equal(4n * PRICE);
    const [receiverClaimed, receiverSettled] = await escrow.receivers(seller, tokenAddress);
    expect([receiverClaimed, receiverSettled]).to.deep.equal([4n * PRICE, 4n * PRICE]);

    // Cooperative refund of what is left: the official client asks, the server completes, the facilitator
    // signs as receiver authorizer and sends claim + refundWithSignature through multicall.
    const refunded = await clientScheme.refund(url);
    expect(refunded.success, JSON.stringify(refunded)).to.equal(true);
    expect(await escrow.refundNonce(channelId)).to.equal(1n);
    expect(await token.balanceOf(buyer.address)).to.equal(before - 4n * PRICE);
    expect(await token.balanceOf(CANONICAL.batchSettlement)).to.equal(0n);
  });

  it("deposits the server's announced minDeposit, not depositMultiplier × price, unless a depositStrategy says", async function () {
    // Why the official client sent a deposit with ≈ 10 % of the payments (issue 28): the official server writes
    // `extra.minDeposit` (default 10 × the price) into every 402, and the client's deposit is that announced
    // amount when there is one, its own `depositMultiplier` × the price only when there is not. A channel opened
    // "for the whole run" with depositMultiplier alone holds 10 payments, and every 10th payment tops it up.
    const payments = 12;
    const multiplier = { depositPolicy: { depositMultiplier: 100 } };
    const announced = await setup(multiplier);
    for (let i = 0; i < payments; i++) {
      const response = await announced.pay(announced.url);
      expect(response.status).to.equal(200);
      await response.arrayBuffer();
    }
    // Two deposits of 10 × the price (payments 1 and 11), not one of 100 ×.
    expect(await announced.token.balanceOf(CANONICAL.batchSettlement)).to.equal(20n * PRICE);

    // The buyer's own amount through depositStrategy (capped by depositMultiplier × maxAmountPerPayment): one deposit.
    const chosen = await setup({ ...multiplier, depositStrategy: () => (100n * PRICE).toString() });
    for (let i = 0; i < payments; i++) {
      const response = await chosen.pay(chosen.url);
      expect(response.status).to.equal(200);
      await response.arrayBuffer();
    }
    expect(await chosen.token.balanceOf(CANONICAL.batchSettlement)).to.equal(100n * PRICE);
  });

  it("refuses claims above the voucher or the balance, foreign signatures and early withdrawals", async function () {
    const [deployer, payer, receiver, authorizer] = await ethers.getSigners();
    await installBatchSettlementFromSpec(deployer, rpc);
    const escrow = BatchSettlementFromSpec__factory.connect(CANONICAL.batchSettlement, deployer);
    const token = await new Eip3009Token__factory(deployer).deploy(TOKEN_NAME, "xUSD");
    const config = {
      payer: payer.address,
      payerAuthorizer: payer.address,
      receiver: receiver.address,
      receiverAuthorizer: authorizer.address,
      token: await token.getAddress(),
      withdrawDelay: 900,
      salt: ethers.ZeroHash,
    };
    const channelId = await escrow.getChannelId(config);
    const { chainId } = await ethers.provider.getNetwork();
    const domain = {
      name: "x402 Batch Settlement",
      version: "1",
      chainId,
      verifyingContract: CANONICAL.batchSettlement,
    };
    const voucher = (signer: typeof payer, amount: bigint) =>
      signer.signTypedData(
        domain,
        {
          Voucher: [
            { name: "channelId", type: "bytes32" },
            { name: "maxClaimableAmount", type: "uint128" },
          ],
        },
        { channelId, maxClaimableAmount: amount },
      );
    expect(await escrow.getVoucherDigest(channelId, 5n)).to.equal(
      ethers.TypedDataEncoder.hash(
        domain,
        {
          Voucher: [
            { name: "channelId", type: "bytes32" },
            { name: "maxClaimableAmount", type: "uint128" },
          ],
        },
        { channelId, maxClaimableAmount: 5n },
      ),
    );
    // Nothing deposited: a claim of 5 is above the balance.
    const row = async (signer: typeof payer, ceiling: bigint, total: bigint) => ({
      voucher: { channel: config, maxClaimableAmount: ceiling },
      signature: await voucher(signer, ceiling),
      totalClaimed: total,
    });
    await expect(escrow.connect(receiver).claim([await row(payer, 5n, 5n)])).to.be.revertedWithCustomError(
      escrow,
      "ClaimAboveBalance",
    );
    await expect(escrow.connect(receiver).claim([await row(payer, 5n, 6n)])).to.be.revertedWithCustomError(
      escrow,
      "ClaimAboveVoucher",
    );
    await expect(escrow.connect(receiver).claim([await row(receiver, 5n, 0n)])).to.be.revertedWithCustomError(
      escrow,
      "InvalidVoucherSignature",
    );
    await expect(escrow.connect(payer).claim([await row(payer, 5n, 0n)])).to.be.revertedWithCustomError(
      escrow,
      "Unauthorized",
    );
    await expect(
      escrow.connect(receiver).claimWithSignature([await row(payer, 5n, 0n)], await voucher(receiver, 1n)),
    ).to.be.revertedWithCustomError(escrow, "InvalidAuthorizerSignature");
    await expect(escrow.connect(payer).initiateWithdraw(config, 1n)).to.be.revertedWithCustomError(
      escrow,
      "WithdrawAboveAvailable",
    );
    await expect(escrow.connect(payer).finalizeWithdraw(config)).to.be.revertedWithCustomError(
      escrow,
      "NoPendingWithdrawal",
    );
    await expect(
      escrow.refundWithSignature(config, 1n, 1n, await voucher(authorizer, 1n)),
    ).to.be.revertedWithCustomError(escrow, "StaleRefundNonce");
  });
});
