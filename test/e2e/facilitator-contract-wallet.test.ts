/**
 * Contract-wallet payers through the facilitator on a real Hardhat chain (docs/facilitator.md
 * "Contract-wallet payers"): the facilitator reaches the chain over HTTP JSON-RPC (an RPC bridge to the
 * in-process network, as `SURETY_FACILITATOR_RPC_URL` does). A 2-of-2 multi-owner wallet registers an EOA
 * signing key in the Vault (`setGuaranteeSigner`); `/verify` and `/settle` accept that key's 65-byte
 * signature and Core issues the certificate. The wallet's own 130-byte multisig signature is refused
 * (`invalid_signature`: the chain no longer asks ERC-1271), another key is `signer_mismatch`, a pending key
 * change is `signing_key_change_pending` on both routes; an unreachable chain is 500
 * `signature_check_unavailable`; EOA payers are unaffected.
 */
import { expect } from "chai";
import { concat, parseEther, type Wallet, ZeroAddress } from "ethers";
import { ethers } from "hardhat";
import { ManualClock } from "../../facilitator/clock";
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

describe("facilitator: contract-wallet payers (registered signing keys) on a real chain", function () {
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
    wallets = new ChainContractWallets(bridge.url, CHECK_TIMEOUT_MS);
    s = await startProtocolStack({ contractWallets: wallets });
    return s;
  }

  /**
   * A 2-of-2 multi-owner wallet (alice, bob) with 1 ETH of collateral in the Vault, its guarantee signing key
   * `key` registered (none when null), driven by alice.
   */
  async function fundedWallet(stack: ProtocolStack, key: Wallet | null) {
    const { w, f } = stack;
    const factory = await ethers.getContractFactory("ERC1271MultiOwnerWallet");
    const contract = await factory.deploy([w.alice.address, w.bob.address], 2);
    const address = await contract.getAddress();
    const wallet = await ethers.getContractAt("ERC1271MultiOwnerWallet", address);
    const deposit = f.vault.interface.encodeFunctionData("deposit");
    await (await wallet.connect(w.alice).execute(f.vaultAddress, ONE, deposit, { value: ONE })).wait();
    const register = async (signer: Wallet) => {
      const data = f.vault.interface.encodeFunctionData("setGuaranteeSigner", [signer.address]);
      await (await wallet.connect(w.alice).execute(f.vaultAddress, 0n, data)).wait();
      await stack.round();
    };
    if (key !== null) await register(key);
    else await stack.round();
    return { address, register };
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

  it("verifies and settles the registered key's signature for a multisig wallet; Core issues the certificate", async function () {
    const stack = await start();
    const { w } = stack;
    const { address: payer } = await fundedWallet(stack, w.dave);

    const claims = claimsFrom(stack, payer, 10n);
    const signature = (await signGuarantee(w.dave, domainOf(stack), claims, "eip712")).toLowerCase();
    const verified = await post(stack.facilitator.url, "/verify", claims, signature);
    expect(verified.status).to.equal(200);
    expect(verified.body).to.include({ isValid: true, invalidReason: null, payer });

    const settled = await post(stack.facilitator.url, "/settle", claims, signature);
    expect(settled.status, JSON.stringify(settled.body)).to.equal(200);
    expect(settled.body.success).to.equal(true);
    const id = guaranteeId({ chainId: CHAIN_ID, vault: stack.f.vaultAddress }, payer, claims.reqId);
    expect(settled.body.transaction.toLowerCase()).to.equal(id.toLowerCase());
    expect(settled.body.certificate.signature).to.match(/^0x[0-9a-f]{96}$/); // 48-byte G1 signature

    // Core stored the key's signature bytes (what answerDispute and remunerate will pass on).
    const view = await stack.coreAs("carol", "GET", `/core/guarantees/${id}`);
    expect(view.status).to.equal(200);
    expect(view.body.state).to.equal("FINALIZED_PAYABLE");
    expect(String(view.body.signature).toLowerCase()).to.equal(signature);
  });

  it("refuses the wallet's own ERC-1271 signature, other keys, and a wallet without a key", async function () {
    const stack = await start();
    const { w } = stack;
    const { address: payer } = await fundedWallet(stack, w.dave);
    const claims = claimsFrom(stack, payer, 10n);

    // The owners' 130-byte multisig signature: what isValidSignature accepts, no longer asked.
    const multisig = await multiSign(stack, claims, [w.alice, w.bob]);
    const refusals: Array<[string, string, RegExp]> = [
      [multisig, "invalid_signature", /65 bytes.*registered in the Vault, Vault\.setGuaranteeSigner/],
      [
        await signGuarantee(w.alice, domainOf(stack), claims, "eip712"),
        "signer_mismatch",
        /neither user_address .* nor its registered guarantee signing key/,
      ],
    ];
    for (const [signature, reason, message] of refusals) {
      const verified = await post(stack.facilitator.url, "/verify", claims, signature);
      expect(verified.status).to.equal(200);
      expect(verified.body).to.include({ isValid: false, invalidReason: reason, payer });
      expect(verified.body.invalidMessage).to.match(message);
      const settled = await post(stack.facilitator.url, "/settle", claims, signature);
      expect(settled.status).to.equal(400);
      expect(settled.body).to.include({ success: false, error: reason, errorReason: reason });
    }

    const { address: keyless } = await fundedWallet(stack, null);
    const unregistered = claimsFrom(stack, keyless, 10n);
    const verified = await post(
      stack.facilitator.url,
      "/verify",
      unregistered,
      await signGuarantee(w.dave, domainOf(stack), unregistered, "eip712"),
    );
    expect(verified.body).to.include({ isValid: false, invalidReason: "signer_mismatch" });
    expect(verified.body.invalidMessage).to.match(/no guarantee signing key registered/);

    // Nothing was issued: the same claims with the key's signature still settle.
    const settled = await post(
      stack.facilitator.url,
      "/settle",
      claims,
      await signGuarantee(w.dave, domainOf(stack), claims, "eip712"),
    );
    expect(settled.status).to.equal(200);
  });

  it("refuses a wallet whose key change is pending with signing_key_change_pending, on /verify and /settle", async function () {
    const stack = await start();
    const { w } = stack;
    const { address: payer, register } = await fundedWallet(stack, w.dave);
    await register(w.carol);
    const claims = claimsFrom(stack, payer, 10n);
    for (const key of [w.dave, w.carol]) {
      const signature = await signGuarantee(key, domainOf(stack), claims, "eip712");
      const verified = await post(stack.facilitator.url, "/verify", claims, signature);
      expect(verified.body).to.include({ isValid: false, invalidReason: "signing_key_change_pending" });
      expect(verified.body.invalidMessage).to.match(/changes its guarantee signing key/);
      const settled = await post(stack.facilitator.url, "/settle", claims, signature);
      expect(settled.status).to.equal(400);
      expect(settled.body).to.include({ success: false, error: "signing_key_change_pending" });
    }
  });

  it("EOA payers are unchanged: a 130-byte signature from an address without a key is invalid_signature", async function () {
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
    const { address: payer } = await fundedWallet(stack, w.dave);
    const claims = claimsFrom(stack, payer, 10n);
    const signature = await signGuarantee(w.dave, domainOf(stack), claims, "eip712");

    // A second facilitator in front of the same Core whose RPC URL drops every connection.
    const clock = new ManualClock(await stack.syncClocks());
    const down = new ChainContractWallets(await unreachableUrl(), CHECK_TIMEOUT_MS);
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
    const { address: payer } = await fundedWallet(s, w.dave);
    const claims = claimsFrom(s, payer, 10n);
    const verified = await post(
      s.facilitator.url,
      "/verify",
      claims,
      await signGuarantee(w.dave, domainOf(s), claims, "eip712"),
    );
    expect(verified.body).to.include({ isValid: false, invalidReason: "signer_mismatch" });
    expect(verified.body.invalidMessage).to.match(/no RPC URL configured/);
  });
});
