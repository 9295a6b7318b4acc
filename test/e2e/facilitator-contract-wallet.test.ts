/**
 * Contract-wallet payers (ERC-1271) through the facilitator on a real Hardhat chain (docs/facilitator.md
 * "Contract-wallet payers"): the facilitator reaches the chain over HTTP JSON-RPC (an RPC bridge to the
 * in-process network, as `SURETY_FACILITATOR_RPC_URL` does), `/verify` and `/settle` accept a 2-of-2
 * multi-owner wallet's 130-byte signature and a single-owner wallet's 65-byte owner signature, Core
 * issues the certificate; a signature the wallet refuses is `signer_mismatch`; an unreachable chain is
 * 500 `signature_check_unavailable` on both routes; EOA payers are unaffected.
 */
import { expect } from "chai";
import { concat, parseEther, type Wallet, ZeroAddress } from "ethers";
import { ethers } from "hardhat";
import { ManualClock, systemClock } from "../../facilitator/clock";
import { ChainContractWallets, SIGNATURE_CHECK_UNAVAILABLE } from "../../facilitator/contract-wallets";
import { silentFacilitatorLogger } from "../../facilitator/logger";
import { type FacilitatorServer, startFacilitatorServer } from "../../facilitator/server";
import type { GuaranteeClaims } from "../../sdk/claims";
import { signGuarantee } from "../../sdk/eip712";
import { guaranteeId } from "../../sdk/ids";
import { bodyFor, facilitatorConfig } from "../facilitator/helpers";
import { request } from "../operator/helpers";
import { closeUnreachableServices, unreachableUrl } from "../support/unreachable";
import { CHAIN_ID, type ProtocolStack, startProtocolStack, startRpcBridge } from "./protocol-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");
const CHECK_TIMEOUT_MS = 5_000;

describe("facilitator: contract-wallet payers (ERC-1271) on a real chain", function () {
  let s: ProtocolStack | undefined;
  let bridge: Awaited<ReturnType<typeof startRpcBridge>> | undefined;
  let wallets: ChainContractWallets | undefined;
  let other: FacilitatorServer | undefined;
  afterEach(async () => {
    await other?.close();
    await s?.close();
    wallets?.close();
    await bridge?.close();
    await closeUnreachableServices();
    other = undefined;
    s = undefined;
    wallets = undefined;
    bridge = undefined;
  });

  async function start(): Promise<ProtocolStack> {
    bridge = await startRpcBridge();
    wallets = new ChainContractWallets(bridge.url, CHECK_TIMEOUT_MS, systemClock);
    s = await startProtocolStack({ contractWallets: wallets });
    return s;
  }

  /** A wallet contract funded with 1 ETH of collateral in the Vault, deposited by `driver`. */
  async function fundedWallet(
    stack: ProtocolStack,
    deploy: () => Promise<{ getAddress(): Promise<string> }>,
    driver: Wallet,
  ) {
    const contract = await deploy();
    const address = await contract.getAddress();
    const wallet = await ethers.getContractAt("ERC1271Wallet", address);
    const deposit = stack.f.vault.interface.encodeFunctionData("deposit");
    await (await wallet.connect(driver).execute(stack.f.vaultAddress, ONE, deposit, { value: ONE })).wait();
    await stack.round();
    return address;
  }

  function claimsFrom(stack: ProtocolStack, payer: string, amount: bigint): GuaranteeClaims {
    return { ...stack.claimsFor("alice", "carol", amount, ETH), user: payer };
  }

  function domainOf(stack: ProtocolStack) {
    return { name: "Surety", version: "1", chainId: CHAIN_ID, verifyingContract: stack.f.vaultAddress };
  }

  /** The owners' signatures of the claims, concatenated in increasing signer address order. */
  async function multiSign(stack: ProtocolStack, claims: GuaranteeClaims, owners: Wallet[]): Promise<string> {
    const sorted = [...owners].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));
    const parts = [];
    for (const owner of sorted) parts.push(await signGuarantee(owner, domainOf(stack), claims, "eip712"));
    return concat(parts).toLowerCase();
  }

  async function post(url: string, path: string, claims: GuaranteeClaims, signature: string) {
    return request(url, "POST", path, { json: bodyFor({ claims, signature, scheme: "eip712" }, 2) });
  }

  it("verifies and settles a 2-of-2 multi-owner wallet's 130-byte signature; Core issues the certificate", async function () {
    const stack = await start();
    const { w } = stack;
    const factory = await ethers.getContractFactory("ERC1271MultiOwnerWallet");
    const payer = await fundedWallet(
      stack,
      () => factory.deploy([w.alice.address, w.bob.address], 2),
      w.alice,
    );

    const claims = claimsFrom(stack, payer, 10n);
    const signature = await multiSign(stack, claims, [w.alice, w.bob]);
    expect((signature.length - 2) / 2).to.equal(130);

    const verified = await post(stack.facilitator.url, "/verify", claims, signature);
    expect(verified.status).to.equal(200);
    expect(verified.body).to.include({ isValid: true, invalidReason: null, payer });

    const settled = await post(stack.facilitator.url, "/settle", claims, signature);
    expect(settled.status, JSON.stringify(settled.body)).to.equal(200);
    expect(settled.body.success).to.equal(true);
    const id = guaranteeId({ chainId: CHAIN_ID, vault: stack.f.vaultAddress }, payer, claims.reqId);
    expect(settled.body.transaction.toLowerCase()).to.equal(id.toLowerCase());
    expect(settled.body.certificate.signature).to.match(/^0x[0-9a-f]{96}$/); // 48-byte G1 signature

    // Core stored the wallet's own signature bytes (what answerChallenge and remunerate will pass on).
    const view = await stack.coreAs("carol", "GET", `/core/guarantees/${id}`);
    expect(view.status).to.equal(200);
    expect(view.body.state).to.equal("FINALIZED_PAYABLE");
    expect(String(view.body.signature).toLowerCase()).to.equal(signature);
  });

  it("accepts a single-owner wallet's 65-byte owner signature (ECDSA recovers the owner, the wallet decides)", async function () {
    const stack = await start();
    const { w } = stack;
    const factory = await ethers.getContractFactory("ERC1271Wallet");
    const payer = await fundedWallet(stack, () => factory.deploy(w.bob.address), w.bob);
    const claims = claimsFrom(stack, payer, 7n);
    const signature = await signGuarantee(w.bob, domainOf(stack), claims, "eip712");

    const verified = await post(stack.facilitator.url, "/verify", claims, signature);
    expect(verified.body).to.include({ isValid: true });
    const settled = await post(stack.facilitator.url, "/settle", claims, signature);
    expect(settled.status, JSON.stringify(settled.body)).to.equal(200);
    expect(settled.body.success).to.equal(true);
  });

  it("refuses signatures the wallet does not accept with signer_mismatch, on /verify and /settle", async function () {
    const stack = await start();
    const { w } = stack;
    const factory = await ethers.getContractFactory("ERC1271MultiOwnerWallet");
    const payer = await fundedWallet(
      stack,
      () => factory.deploy([w.alice.address, w.bob.address], 2),
      w.alice,
    );
    const claims = claimsFrom(stack, payer, 10n);

    const refusals = [
      // one owner only (65 bytes: recovers to alice, not the wallet; the wallet wants two)
      await signGuarantee(w.alice, domainOf(stack), claims, "eip712"),
      // a non-owner in place of bob
      await multiSign(stack, claims, [w.alice, w.dave]),
      // both owners, over other claims (another amount)
      await multiSign(stack, { ...claims, amount: 11n }, [w.alice, w.bob]),
    ];
    for (const signature of refusals) {
      const verified = await post(stack.facilitator.url, "/verify", claims, signature);
      expect(verified.status).to.equal(200);
      expect(verified.body).to.include({ isValid: false, invalidReason: "signer_mismatch", payer });
      expect(verified.body.invalidMessage).to.match(
        /contract wallet and its isValidSignature \(ERC-1271\) refuses/,
      );
      const settled = await post(stack.facilitator.url, "/settle", claims, signature);
      expect(settled.status).to.equal(400);
      expect(settled.body).to.include({
        success: false,
        error: "signer_mismatch",
        errorReason: "signer_mismatch",
      });
    }
    // Nothing was issued: the same claims with the right signature still settle.
    const settled = await post(
      stack.facilitator.url,
      "/settle",
      claims,
      await multiSign(stack, claims, [w.alice, w.bob]),
    );
    expect(settled.status).to.equal(200);
  });

  it("EOA payers are unchanged: a 130-byte signature from an address without code is invalid_signature", async function () {
    const stack = await start();
    const { w } = stack;
    await stack.f.vault.connect(w.alice).deposit({ value: ONE });
    await stack.round();
    await stack.settle("alice", "carol", 5n, ETH);

    const claims = stack.claimsFor("alice", "carol", 5n, ETH);
    const signature = await multiSign(stack, claims, [w.alice, w.bob]);
    const verified = await post(stack.facilitator.url, "/verify", claims, signature);
    expect(verified.body).to.include({ isValid: false, invalidReason: "invalid_signature" });
    expect(verified.body.invalidMessage).to.match(/65 bytes/);
  });

  it("answers 500 signature_check_unavailable on /verify and /settle when the chain cannot be asked", async function () {
    const stack = await start();
    const { w } = stack;
    const factory = await ethers.getContractFactory("ERC1271MultiOwnerWallet");
    const payer = await fundedWallet(
      stack,
      () => factory.deploy([w.alice.address, w.bob.address], 2),
      w.alice,
    );
    const claims = claimsFrom(stack, payer, 10n);
    const signature = await multiSign(stack, claims, [w.alice, w.bob]);

    // A second facilitator in front of the same Core whose RPC URL drops every connection.
    const clock = new ManualClock(await stack.syncClocks());
    const down = new ChainContractWallets(await unreachableUrl(), CHECK_TIMEOUT_MS, clock);
    other = await startFacilitatorServer(facilitatorConfig({ coreUrl: stack.core.url, chainId: CHAIN_ID }), {
      clock,
      logger: silentFacilitatorLogger(),
      vaultCheck: null,
      contractWallets: down,
    });
    const verified = await post(other.url, "/verify", claims, signature);
    expect(verified.status).to.equal(500);
    expect(verified.body.code).to.equal(SIGNATURE_CHECK_UNAVAILABLE);
    expect(verified.body.error).to.match(/could not be checked: the chain could not be asked/);
    const settled = await post(other.url, "/settle", claims, signature);
    expect(settled.status).to.equal(500);
    expect(settled.body).to.include({
      success: false,
      error: SIGNATURE_CHECK_UNAVAILABLE,
      errorReason: SIGNATURE_CHECK_UNAVAILABLE,
      certificate: null,
    });
    // An EOA payer needs no chain read: verification still completes.
    const eoa = stack.claimsFor("alice", "carol", 5n, ETH);
    const eoaVerified = await post(
      other.url,
      "/verify",
      eoa,
      await signGuarantee(w.alice, domainOf(stack), eoa, "eip712"),
    );
    expect(eoaVerified.body).to.include({ isValid: true });
    down.close();
  });

  it("without an RPC URL a contract wallet is refused, naming the missing RPC", async function () {
    s = await startProtocolStack();
    const { w } = s;
    const factory = await ethers.getContractFactory("ERC1271MultiOwnerWallet");
    const payer = await fundedWallet(s, () => factory.deploy([w.alice.address, w.bob.address], 2), w.alice);
    const claims = claimsFrom(s, payer, 10n);
    const verified = await post(
      s.facilitator.url,
      "/verify",
      claims,
      await multiSign(s, claims, [w.alice, w.bob]),
    );
    expect(verified.body).to.include({ isValid: false, invalidReason: "invalid_signature" });
    expect(verified.body.invalidMessage).to.match(/no RPC URL configured/);
  });
});
