/**
 * A contract-wallet payer through Core, on a real chain with a real store (docs/protocol.md "Payer
 * signatures"): the wallet (contracts/test/ERC1271Wallet.sol) registers an EOA signing key in the Vault
 * (`setGuaranteeSigner`), and issuance accepts that key's signature for the wallet's guarantees, refuses
 * anyone else's (and the wallet's own ERC-1271 answer: Core no longer asks it), refuses everything while a
 * key change is pending (400 `signing_key_change_pending`), then only the new key. The guarantee is netted;
 * the wallet then changes its ERC-1271 signer and its Vault key and disputes its debit: the keeper's answer
 * still passes on chain (issue 25, item 3). A chain that cannot be asked answers 500
 * `signature_check_unavailable`, nothing issued.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther, ZeroAddress, type Signer, type Wallet } from "ethers";
import { ethers } from "hardhat";
import { DEFAULT_SCOPES, type Principal } from "../../operator/auth";
import { toErrorResponse } from "../../operator/api/error-handler";
import { DomainError } from "../../operator/errors";
import { RpcChainGateway } from "../../operator/chain/gateway";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { PayerSigningKeys } from "../../operator/guarantees/signing-keys";
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
  // carol drives the wallet and holds its first signing key; the wallet, not carol, is the payer.
  const wallet = await (await ethers.getContractFactory("ERC1271Wallet")).deploy(f.carol.address);
  const walletAddress = await wallet.getAddress();
  const deposit = f.vault.interface.encodeFunctionData("deposit");
  await wallet.connect(f.carol).execute(f.vaultAddress, ONE, deposit, { value: ONE });
  await f.clearingHouse.connect(f.admin).postBond(ETH, ONE, { value: ONE });
  const register = async (key: string) => {
    const data = f.vault.interface.encodeFunctionData("setGuaranteeSigner", [key]);
    await (await wallet.connect(f.carol).execute(f.vaultAddress, 0n, data)).wait();
  };
  return { f, wallet, walletAddress, register };
}

describe("issuance: a contract-wallet payer (its signing key registered in the Vault)", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  let reqId = 1_000n;
  /** Issues wallet → bob signed by `signer` (the wallet's registered key, or not). */
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

  /** Indexes the chain and moves Core's wall clock to chain time. */
  async function sync() {
    await h!.indexer.syncToHead();
    await h!.syncClock();
  }

  it("issues on the registered key's signature, and the keeper's answer survives the wallet's change of signer", async function () {
    const { f, wallet, walletAddress, register } = await loadFixture(walletFixture);
    h = await openCore(f, { chain: new RpcChainGateway(ethers.provider, { timeoutMs: 5_000 }) });
    const tasks = clearingTasks(h);
    await sync();
    expect((await h.store.collateral.getCollateral(walletAddress, ETH)).deposited).to.equal(ONE);

    // No key yet: carol's signature is what the wallet's ERC-1271 accepts, but Core no longer asks it.
    const unregistered = await refusal(issueFromWallet(f, walletAddress, f.carol, ONE / 4n));
    expect(unregistered).to.include({ status: 400, code: "invalid_signature" });
    expect(unregistered.message).to.match(/no guarantee signing key registered.*setGuaranteeSigner/);

    await register(f.carol.address);
    await sync();
    const stranger = await refusal(issueFromWallet(f, walletAddress, f.dave, ONE / 4n));
    expect(stranger).to.include({ status: 400, code: "invalid_signature" });
    expect(stranger.message).to.match(/^signature: made by .*registered guarantee signing key/);
    const issued = await issueFromWallet(f, walletAddress, f.carol, ONE / 2n);
    expect((await h.store.guarantees.getGuarantee(issued.id))!.state).to.equal("FINALIZED_PAYABLE");
    expect((await h.store.collateral.getCollateral(walletAddress, ETH)).locked).to.equal(ONE / 2n);
    // An EOA payer (no key) is unchanged: someone else's signature is refused.
    const eoa = await refusal(issueFromWallet(f, f.alice.address, f.dave, 1n));
    expect(eoa).to.include({ status: 400, code: "invalid_signature" });

    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.chainClock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    await h.indexer.syncToHead();
    expect((await f.clearingHouse.debtOf(1, ETH, walletAddress)).amount).to.equal(ONE / 2n);

    // The attack: the wallet now accepts only dave (ERC-1271) and moves its Vault key, then disputes.
    await wallet.connect(f.carol).setSigner(f.dave.address);
    await register(f.dave.address);
    const challenge = f.clearingHouse.interface.encodeFunctionData("disputeGuarantee", [1, ETH, 0]);
    await wallet.connect(f.carol).execute(f.clearingHouseAddress, 0, challenge);
    await h.indexer.syncToHead();
    const tick = await tasks.keeper.tick();
    expect(tick.answered.map((a) => a.debtor)).to.deep.equal([walletAddress]);
    expect((await f.clearingHouse.disputeOf(1, ETH, walletAddress, 0)).toString()).to.equal("2"); // Upheld
    expect((await f.clearingHouse.debtOf(1, ETH, walletAddress)).status).to.equal(5n); // Answered
  });

  it("refuses everything while a key change is pending, then accepts only the new key", async function () {
    const { f, walletAddress, register } = await loadFixture(walletFixture);
    h = await openCore(f, { chain: new RpcChainGateway(ethers.provider, { timeoutMs: 5_000 }) });
    await register(f.carol.address);
    await sync();
    await issueFromWallet(f, walletAddress, f.carol, 1n);

    await register(f.dave.address);
    await sync();
    const { effectiveFrom } = await f.vault.guaranteeSigner(walletAddress);
    for (const signer of [f.carol, f.dave]) {
      const pending = await refusal(issueFromWallet(f, walletAddress, signer, 1n));
      expect(pending).to.include({ status: 400, code: "signing_key_change_pending" });
      expect(pending.message).to.include(`timestamped ${effectiveFrom} or later`);
    }

    await time.increaseTo(effectiveFrom);
    await ethers.provider.send("evm_mine", []);
    await sync();
    const old = await refusal(issueFromWallet(f, walletAddress, f.carol, 1n));
    expect(old).to.include({ status: 400, code: "invalid_signature" });
    await issueFromWallet(f, walletAddress, f.dave, 1n);
  });

  it("answers 500 signature_check_unavailable when the chain cannot be asked, and issues nothing", async function () {
    const { f, walletAddress, register } = await loadFixture(walletFixture);
    await register(f.carol.address);
    const dead = new RpcChainGateway(
      { send: () => Promise.reject(new Error("connection refused")) },
      { timeoutMs: 1_000 },
    );
    h = await openCore(f, { chain: dead });
    await sync();
    const refused = await refusal(issueFromWallet(f, walletAddress, f.carol, ONE / 2n));
    expect(refused).to.include({ status: 500, code: "signature_check_unavailable" });
    expect(refused.message).to.match(/connection refused/);
    expect((await h.store.collateral.getCollateral(walletAddress, ETH)).locked).to.equal(0n);
  });

  it("reads a payer's key once per indexed block, and never caches a failed read", async function () {
    const calls: Array<[string, number | undefined]> = [];
    let fail = false;
    const keys = new PayerSigningKeys(
      {
        vaultGuaranteeSigner: async (_vault, payer, blockNumber) => {
          calls.push([payer, blockNumber]);
          if (fail) throw new Error("down");
          return { key: payer === "0xC0" ? "0x" + "11".repeat(20) : ZeroAddress, effectiveFrom: 0 };
        },
      },
      "0xVault",
    );
    expect(await keys.latest("0xC0", 7)).to.deep.equal({ key: "0x" + "11".repeat(20), effectiveFrom: 0 });
    expect(await keys.latest("0xc0", 7)).to.not.equal(null);
    expect(await keys.latest("0xE0", 7)).to.equal(null);
    expect(calls).to.deep.equal([
      ["0xC0", 7],
      ["0xE0", 7],
    ]);
    await keys.latest("0xC0", 8);
    expect(calls.at(-1)).to.deep.equal(["0xC0", 8]);
    fail = true;
    await keys.latest("0xD0", 8).catch(() => null);
    fail = false;
    await keys.latest("0xD0", 8);
    expect(calls.filter(([p]) => p === "0xD0")).to.have.length(2);
  });
});
