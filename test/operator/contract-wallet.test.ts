/**
 * A contract-wallet payer (ERC-1271, contracts/test/ERC1271Wallet.sol) through Core, on a real chain with
 * a real store: issuance accepts the owner's signature for the wallet's guarantee (the EOA recovery fails,
 * the wallet's `isValidSignature` says yes) and refuses anyone else's; the guarantee is netted in a
 * committed cycle, and the keeper's answer to the wallet's challenge passes the contract's own ERC-1271
 * check. A chain that cannot be asked answers 500 `signature_check_unavailable`, nothing issued.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther, ZeroAddress, type Signer, type Wallet } from "ethers";
import { ethers } from "hardhat";
import { DEFAULT_SCOPES, type Principal } from "../../operator/auth";
import { toErrorResponse } from "../../operator/api/error-handler";
import { DomainError } from "../../operator/errors";
import { RpcChainGateway } from "../../operator/chain/gateway";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { ContractSignatureChecker } from "../../operator/guarantees/contract-signatures";
import { ManualClock } from "../../operator/clock";
import type { GuaranteeClaimsV1 } from "../../sdk/claims";
import { toWireSignedGuarantee } from "../../sdk/claims";
import { signGuarantee } from "../../sdk/eip712";
import { guaranteeId } from "../../sdk/ids";
import {
  chainFixture,
  type ChainFixture,
  clearingTasks,
  type CoreHarness,
  domainOf,
  openCore,
} from "./indexer-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");

async function walletFixture() {
  const f = await chainFixture();
  // carol's key drives the wallet; the wallet, not carol, is the payer.
  const wallet = await (await ethers.getContractFactory("ERC1271Wallet")).deploy(f.carol.address);
  const walletAddress = await wallet.getAddress();
  const deposit = f.vault.interface.encodeFunctionData("deposit");
  await wallet.connect(f.carol).execute(f.vaultAddress, ONE, deposit, { value: ONE });
  await f.clearingHouse.connect(f.admin).postBond(ETH, ONE, { value: ONE });
  return { f, wallet, walletAddress };
}

describe("issuance: a contract-wallet payer (ERC-1271)", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  let reqId = 1_000n;
  /** Issues wallet → `recipient` signed by `signer` (the wallet's owner, or not). */
  async function issueFromWallet(f: ChainFixture, walletAddress: string, signer: Signer, amount: bigint) {
    const claims: GuaranteeClaimsV1 = {
      version: 1,
      user: walletAddress,
      recipient: f.bob.address,
      reqId: reqId++,
      amount,
      asset: ETH,
      timestamp: h!.clock.nowSeconds(),
    };
    const signature = await signGuarantee(signer as unknown as Wallet, domainOf(f), claims, "eip712");
    const body = toWireSignedGuarantee({ claims, signature: signature.toLowerCase(), scheme: "eip712" });
    const principal: Principal = {
      wallet: f.bob.address,
      scopes: DEFAULT_SCOPES,
      tokenId: "t",
      expiresAt: 0,
    };
    const certificate = await h!.context.issuer.issue(principal, body);
    return {
      certificate,
      id: guaranteeId({ chainId: 31337n, vault: f.vaultAddress }, walletAddress, claims.reqId),
    };
  }

  async function refusal(
    promise: Promise<unknown>,
  ): Promise<{ status: number; code: string; message: string }> {
    try {
      await promise;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { status: toErrorResponse(error).status, code: error.code, message: error.message };
    }
    throw new Error("expected a refusal");
  }

  it("issues on the owner's signature, nets it, and the keeper's answer passes the contract's ERC-1271 check", async function () {
    const { f, wallet, walletAddress } = await loadFixture(walletFixture);
    h = await openCore(f, { chain: new RpcChainGateway(ethers.provider, { timeoutMs: 5_000 }) });
    const tasks = clearingTasks(h);
    await h.indexer.syncToHead();
    await h.syncClock();
    expect((await h.store.getCollateral(walletAddress, ETH)).deposited).to.equal(ONE);

    const stranger = await refusal(issueFromWallet(f, walletAddress, f.dave, ONE / 4n));
    expect(stranger).to.include({ status: 400, code: "invalid_signature" });
    expect(stranger.message).to.match(/^signature: /);
    const issued = await issueFromWallet(f, walletAddress, f.carol, ONE / 2n);
    expect((await h.store.getGuarantee(issued.id))!.state).to.equal("FINALIZED_PAYABLE");
    expect((await h.store.getCollateral(walletAddress, ETH)).locked).to.equal(ONE / 2n);
    // An EOA payer (no code) is unchanged: someone else's signature is refused.
    const eoa = await refusal(issueFromWallet(f, f.alice.address, f.dave, 1n));
    expect(eoa).to.include({ status: 400, code: "invalid_signature" });

    await h.store.setOperatorState(NEXT_CUTOFF_KEY, String(h.chainClock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    await h.indexer.syncToHead();
    expect((await f.clearingHouse.debtOf(1, ETH, walletAddress)).amount).to.equal(ONE / 2n);

    // The wallet disputes its debit's guarantee; Core answers with the owner's signature, checked on chain by ERC-1271.
    const challenge = f.clearingHouse.interface.encodeFunctionData("disputeGuarantee", [1, ETH, 0]);
    await wallet.connect(f.carol).execute(f.clearingHouseAddress, 0, challenge);
    await h.indexer.syncToHead();
    const tick = await tasks.keeper.tick();
    expect(tick.answered.map((a) => a.debtor)).to.deep.equal([walletAddress]);
    expect((await f.clearingHouse.debtOf(1, ETH, walletAddress)).status).to.equal(5n); // Answered
  });

  it("answers 500 signature_check_unavailable when the chain cannot be asked, and issues nothing", async function () {
    const { f, walletAddress } = await loadFixture(walletFixture);
    const dead = new RpcChainGateway(
      { send: () => Promise.reject(new Error("connection refused")) },
      { timeoutMs: 1_000 },
    );
    h = await openCore(f, { chain: dead });
    await h.indexer.syncToHead();
    await h.syncClock();
    const refused = await refusal(issueFromWallet(f, walletAddress, f.carol, ONE / 2n));
    expect(refused).to.include({ status: 500, code: "signature_check_unavailable" });
    expect(refused.message).to.match(/connection refused/);
    expect((await h.store.getCollateral(walletAddress, ETH)).locked).to.equal(0n);
  });

  it("caches code presence: a contract for good, an address without code for the TTL", async function () {
    const calls: string[] = [];
    const clock = new ManualClock(1_000);
    const checker = new ContractSignatureChecker(
      {
        hasCode: async (address) => {
          calls.push(address);
          return address === "0xC0";
        },
        isValidErc1271Signature: async () => true,
      },
      clock,
      60,
    );
    expect(await checker.isValid("0xC0", "0x", "0x")).to.equal(true);
    expect(await checker.isValid("0xc0", "0x", "0x")).to.equal(true);
    expect(await checker.isValid("0xE0", "0x", "0x")).to.equal(false);
    clock.set(1_059);
    expect(await checker.isValid("0xE0", "0x", "0x")).to.equal(false);
    expect(calls).to.deep.equal(["0xC0", "0xE0"]);
    clock.set(1_060);
    expect(await checker.isValid("0xE0", "0x", "0x")).to.equal(false);
    expect(calls).to.deep.equal(["0xC0", "0xE0", "0xE0"]);
  });
});
