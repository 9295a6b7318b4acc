/**
 * Issue 17, ClearingHouse side: the attacks of the custody review, each shown failing now, with the
 * honest path next to it.
 *  - Finding 6 (cheap griefing): a `remunerate` front-running a commit no longer reverts it; V2
 *    self-payment spam no longer fills the commit.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { id as hashText, parseEther } from "ethers";

import { buildCommitPlan, toCommitCycleCall } from "../../operator/clearing/commit-plan";
import { netCycle, type PayableGuarantee } from "../../operator/clearing/netting";
import { ETH, buildCycle, suretyFixture, transfer, v2Certificate, type Position } from "./helpers";

const ONE = parseEther("1");
const REMUNERATED = 1n;

async function validatedV2Fixture() {
  const f = await suretyFixture();
  await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
  const policy = {
    registry: f.registryAddress,
    validator: f.validator.address,
    agentId: 3n,
    minScore: 50,
    jobHash: hashText("job"),
    tag: "ok",
    deadline: BigInt((await time.latest()) + 3600),
  };
  const cert = v2Certificate({
    chainId: f.chainId,
    vault: f.vaultAddress,
    user: f.alice.address,
    recipient: f.bob.address,
    reqId: 77n,
    amount: 2n * ONE,
    asset: ETH,
    policy,
  });
  await f.validationRegistry.connect(f.bob).validationRequest(f.validator.address, 3n, "", cert.requestHash);
  await f.validationRegistry
    .connect(f.validator)
    .validationResponse(cert.requestHash, 90, "", hashText("e"), "ok");
  return { ...f, cert };
}

describe("Custody review (issue 17), ClearingHouse side", () => {
  describe("finding 6: cheap griefing of commits", () => {
    it("a remunerate front-running a 60-debtor commit no longer reverts it: the id is skipped and reported", async () => {
      const f = await loadFixture(validatedV2Fixture);
      // Core planned the cycle (alice's V2 guarantee to bob among 60 debtors) before the remunerate landed.
      const positions: Position[] = [...transfer(ETH, f.alice.address, f.bob.address, 2n * ONE)];
      for (let i = 1; i < 60; i++) {
        positions.push(
          ...transfer(ETH, ethers.Wallet.createRandom().address, ethers.Wallet.createRandom().address, ONE),
        );
      }
      const cycle = buildCycle(1, positions);
      const fresh = hashText("another netted V2 id");
      await f.vault.connect(f.bob).remunerate(f.cert.claims, f.cert.signature); // the front-runner

      const tx = f.clearingHouse
        .connect(f.operator)
        .commitCycle(1, cycle.root, cycle.totals, cycle.debtors, [f.cert.guaranteeId, fresh]);
      await expect(tx)
        .to.emit(f.vault, "GuaranteeNettingSkipped")
        .withArgs(f.cert.guaranteeId, REMUNERATED)
        .and.to.emit(f.clearingHouse, "CycleCommitted");
      expect(await f.clearingHouse.lastCycleId()).to.equal(1n);
      expect(await f.vault.consumption(f.cert.guaranteeId)).to.equal(REMUNERATED); // paid once, by remunerate
      expect(await f.vault.consumption(fresh)).to.equal(2n);
      expect((await f.clearingHouse.getCycle(1)).openDebts).to.equal(60n);
    });

    it("1-wei V2 self-payments are not listed: 1,237 of them cost the commit nothing", async () => {
      const f = await loadFixture(suretyFixture);
      const spam: PayableGuarantee[] = Array.from({ length: 1_237 }, (_, i) => ({
        guaranteeId: hashText(`spam ${i}`),
        version: 2,
        user: f.carol.address,
        recipient: f.carol.address,
        asset: ETH,
        amount: 1n,
      }));
      const honest: PayableGuarantee = {
        guaranteeId: hashText("honest"),
        version: 2,
        user: f.alice.address,
        recipient: f.bob.address,
        asset: ETH,
        amount: ONE,
      };
      const plan = buildCommitPlan(netCycle(1n, [...spam, honest]))!;
      expect(plan.args.nettedV2Ids).to.deep.equal([honest.guaranteeId.toLowerCase()]);
      const receipt = await (
        await f.clearingHouse.connect(f.operator).commitCycle(...toCommitCycleCall(plan.args))
      ).wait();
      // One debtor and one listed id: the spam adds no per-id cost (it would be ≈ 30M gas listed).
      expect(receipt!.gasUsed).to.be.lessThan(300_000n);
      expect(await f.vault.consumption(spam[0].guaranteeId)).to.equal(0n);
    });
  });
});
