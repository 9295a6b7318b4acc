/**
 * The facilitator checks Core against the Vault on a real Hardhat chain (facilitator/vault-check.ts,
 * docs/facilitator.md "Core against the chain"): with the keys matching it settles; once the Vault's
 * operator key is rotated away from Core's, `/settle` is refused with `vault_mismatch` and `/health`
 * answers 503, until the key is Core's again.
 */
import { expect } from "chai";
import { hexlify } from "ethers";
import { ethers } from "hardhat";
import { blsKeyFromSecret, publicKeyToEip2537 } from "../../sdk/bls";
import { ChainVaultCheck, VAULT_MISMATCH } from "../../facilitator/vault-check";
import { testDeployment } from "../facilitator/helpers";
import { request } from "../operator/helpers";
import { type ProtocolStack, startProtocolStack } from "./protocol-fixtures";
import { CORE_BLS_SECRET } from "../operator/indexer-fixtures";

const OTHER_KEY = blsKeyFromSecret("0x" + "44".repeat(32)).publicKey;
const CHECK_TIMEOUT_MS = 5_000;

describe("facilitator: Core's BLS key and Vault against the chain", function () {
  let s: ProtocolStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** Makes `key` the Vault's operator key: scheduled, then executed after the timelock (the stack's clocks follow). */
  async function rotateTo(stack: ProtocolStack, key: Uint8Array): Promise<void> {
    const vault = stack.f.vault.connect(stack.f.admin);
    await (await vault.setOperatorKey(publicKeyToEip2537(key))).wait();
    await stack.advance(Number(await vault.timelockDelay()));
    await (await vault.setOperatorKey(publicKeyToEip2537(key))).wait();
    // Past the facilitator's public-params TTL: the next request reloads them and checks again.
    await stack.advance(61);
  }

  it("settles while the Vault holds Core's key; refuses /settle and fails /health after a rotation; recovers", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    await f.vault.connect(w.alice).depositToken(f.usdAddress, 1_000n);
    await s.round();

    expect((await request(s.facilitator.url, "GET", "/health")).status).to.equal(200);
    await s.settle("alice", "carol", 10n, f.usdAddress);

    await rotateTo(s, OTHER_KEY);
    const refused = await s.settleRaw(s.claimsFor("alice", "carol", 10n, f.usdAddress));
    expect(refused.status).to.equal(500);
    expect(refused.body).to.include({ success: false, error: VAULT_MISMATCH, certificate: null });
    expect(refused.body?.errorReason).to.equal(VAULT_MISMATCH);
    expect(refused.body?.errorMessage).to.include(`is not the Vault's operator key ${hexlify(OTHER_KEY)}`);
    const health = await request(s.facilitator.url, "GET", "/health");
    expect(health.status).to.equal(503);
    expect(health.body?.status).to.equal("fail");
    expect(health.body?.error).to.match(/^vault_mismatch: /);

    await rotateTo(s, blsKeyFromSecret(CORE_BLS_SECRET).publicKey);
    expect((await request(s.facilitator.url, "GET", "/health")).status).to.equal(200);
    await s.settle("alice", "carol", 10n, f.usdAddress);
  });

  describe("ChainVaultCheck", function () {
    it("names both keys when Core's key is not the Vault's, and remembers only matches", async function () {
      s = await startProtocolStack();
      const check = new ChainVaultCheck(ethers.provider, CHECK_TIMEOUT_MS);
      const vault = s.f.vaultAddress;
      // testDeployment carries another BLS key than the Vault's (test/facilitator/helpers.ts coreBls).
      const other = testDeployment({ contract_address: vault });
      const result = await check.check(other);
      expect(result.ok).to.equal(false);
      expect(!result.ok && result.reason).to.include("is not the Vault's operator key");
      const core = await s.facilitator.context.core.getDeployment();
      expect(await check.check(core)).to.deep.equal({ ok: true });
    });

    it("refuses a Vault address without a contract and a chain other than Core's", async function () {
      const check = new ChainVaultCheck(ethers.provider, CHECK_TIMEOUT_MS);
      const empty = await check.check(testDeployment({ contract_address: "0x" + "11".repeat(20) }));
      expect(!empty.ok && empty.reason).to.match(/no contract at Core's Vault address/);
      const otherChain = await check.check(testDeployment({ chain_id: 1 }));
      expect(!otherChain.ok && otherChain.reason).to.match(/RPC serves chain 31337, Core serves chain 1/);
    });
  });
});
