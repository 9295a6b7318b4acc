/**
 * Core's keeper across operator key changes (audit M-3 and M-2, docs/clearing.md "Operator key gaps"), on a
 * real chain with a real store: after a routine rotation the certificate stored at issuance no longer
 * verifies, so the keeper re-signs the answered guarantee's claims with Core's current key once it is the
 * Vault's, and never concedes for a key it does not hold; after a revocation it waits for the new key and
 * answers in the window the chain extends for the gap.
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { ethers } from "hardhat";
import { Writable } from "node:stream";
import pino from "pino";
import { expect } from "chai";
import { parseEther, ZeroAddress } from "ethers";
import { publicKeyToEip2537, type BlsSigner } from "../../sdk/bls";
import { operatorBlsSigner } from "../../operator/guarantees/signing-worker";
import { RpcChainGateway } from "../../operator/chain/gateway";
import { guaranteeView, withCurrentCertificate } from "../../operator/guarantees";
import { verifyCertificateSignature } from "../../sdk/certificate";
import { toWireSignedGuarantee } from "../../sdk/claims";
import { createCoreContext } from "../../operator/app";
import { DEFAULT_SCOPES, type Principal } from "../../operator/auth";
import type { IssuanceError } from "../../operator/guarantees/issuance";
import { createAnswerCertifier } from "../../operator/clearing/answer-certifier";
import { ClearingKeeper } from "../../operator/clearing/keeper";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import type { Logger } from "../../operator/logger";
import { silentLogger } from "../../operator/logger";
import {
  CORE_BLS_SECRET,
  advance,
  chainFixture,
  clearingTasks,
  type CoreHarness,
  issueGuarantee,
  openCore,
  time,
} from "./indexer-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");
const NEW_SECRET = "0x" + "6b".repeat(32);
const ANSWERED = 5n; // IClearingHouse.DebtStatus.Answered

/** Core's signer for `SURETY_BLS_SECRET` = `secret` (key material, as Core derives its key). */
const coreSigner = (secret: string): BlsSigner => operatorBlsSigner({ blsSecret: secret });

describe("Core's keeper across operator key changes (audit M-3, M-2)", function () {
  let h: CoreHarness | undefined;
  let gateway: RpcChainGateway | undefined;
  afterEach(async () => {
    await h?.close();
    await gateway?.close();
    h = undefined;
  });

  /**
   * alice signs 3 ETH to bob under Core's first key (or 1 + 2 ETH: `split`); Core commits cycle 1 and alice
   * disputes position 0 (without revealing her summary).
   */
  async function disputed(beforeCommit?: () => Promise<void>, split = false) {
    const f = await loadFixture(chainFixture);
    gateway = new RpcChainGateway(ethers.provider, { timeoutMs: 5_000 });
    h = await openCore(f, { chain: gateway });
    const tasks = clearingTasks(h);
    await beforeCommit?.();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await h.indexer.syncToHead();
    await h.syncClock();
    for (const amount of split ? [ONE, 2n * ONE] : [3n * ONE])
      await issueGuarantee(h, f.alice, f.bob.address, amount);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.clock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1 });
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await h.indexer.syncToHead();
    const cycle = await f.clearingHouse.getCycle(1);
    return { f, tasks, cycle };
  }

  /** A keeper whose Core signs with `signer` (Core restarted with that secret), checked against the Vault. */
  function keeperWith(
    tasks: ReturnType<typeof clearingTasks>,
    signer: BlsSigner,
    logger: Logger = silentLogger(),
  ) {
    const vault = h!.f.deployment.vault;
    return new ClearingKeeper({
      store: h!.store,
      sender: tasks.sender,
      deployment: h!.f.deployment,
      chainClock: h!.chainClock,
      logger,
      claimCredits: false,
      certifier: createAnswerCertifier({ signer, vaultKey: () => gateway!.vaultOperatorKey(vault) }),
    });
  }

  function capture(): { logger: Logger; lines: Record<string, unknown>[] } {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
        done();
      },
    });
    return { logger: pino({ level: "info" }, sink), lines };
  }

  it("a rotation inside the cycle's window: answered with the claims re-signed under the new key", async function () {
    const newSigner = coreSigner(NEW_SECRET);
    const newKey = publicKeyToEip2537(newSigner.publicKey);
    let readyAt = 0n;
    const { f, tasks } = await disputed(async () => {
      // Scheduled so that it takes effect inside cycle 1's challenge window.
      const delay = await h!.f.vault.timelockDelay();
      await h!.f.vault.connect(h!.f.admin).setOperatorKey(newKey);
      readyAt = BigInt(await time.latest()) + delay;
      await advance(h!, Number(delay) - h!.f.timings.challengeWindow / 2);
    });
    await time.increaseTo(readyAt);
    await f.vault.connect(f.admin).setOperatorKey(newKey);
    await advance(h!, 1);

    // Without the certifier the stored (old-key) certificate is refused; the keeper does not concede.
    expect((await tasks.keeper.tick()).answered).to.deep.equal([]);
    // Core still on its old secret: its key is not the Vault's, so it waits and says so.
    const old = capture();
    expect((await keeperWith(tasks, coreSigner(CORE_BLS_SECRET), old.logger).tick()).answered).to.deep.equal(
      [],
    );
    expect(old.lines.some((l) => String(l.reason).includes("is not the Vault's operator key"))).to.equal(
      true,
    );
    expect(await f.clearingHouse.disputeOf(1, ETH, f.alice.address, 0)).to.equal(1n); // still Open

    // Core restarted with the new secret: the claims are re-signed and the answer verifies.
    const kept = await keeperWith(tasks, newSigner).tick();
    expect(kept.answered.map((a) => [a.position, a.conceded])).to.deep.equal([[0, false]]);
    await h!.indexer.syncToHead();
    expect((await h!.store.cycles.listCycleDisputes({ cycleId: 1 })).map((d) => d.status)).to.deep.equal([
      "UPHELD",
    ]);
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(ANSWERED);
  });

  it("GET /core/guarantees/{id} serves the certificate under Core's current key", async function () {
    const f = await loadFixture(chainFixture);
    gateway = new RpcChainGateway(ethers.provider, { timeoutMs: 5_000 });
    h = await openCore(f, { chain: gateway });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await h.indexer.syncToHead();
    await h.syncClock();
    const { id, certificate, claims, payer } = await issueGuarantee(h, f.alice, f.bob.address, ONE);
    const stored = guaranteeView((await h.store.guarantees.getGuarantee(id))!, 31337);
    const oldSigner = coreSigner(CORE_BLS_SECRET);
    // Unchanged key: byte for byte the certificate issued (BLS signatures are deterministic).
    expect((await withCurrentCertificate(stored, oldSigner)).certificate).to.deep.equal(certificate);
    const newSigner = coreSigner(NEW_SECRET);
    const current = (await withCurrentCertificate(stored, newSigner)).certificate;
    expect(current.claims).to.equal(certificate.claims);
    expect(verifyCertificateSignature(newSigner.publicKey, current)).to.equal(true);
    expect(verifyCertificateSignature(newSigner.publicKey, certificate)).to.equal(false);

    // A byte-identical retry to a Core restarted with the new secret: the 409 carries the current certificate.
    const restarted = createCoreContext(
      { ...h.context, chain: gateway },
      { signer: newSigner, leadership: h.context.leadership },
    );
    const body = toWireSignedGuarantee({
      claims,
      signature: payer.signature.toLowerCase(),
      scheme: payer.scheme,
    });
    const principal: Principal = {
      wallet: f.bob.address,
      scopes: DEFAULT_SCOPES,
      tokenId: "test",
      expiresAt: 0,
    };
    const refused = await restarted.issuer
      .issue(principal, body)
      .then(
        () => null,
        (error: unknown) => error as IssuanceError,
      )
      .finally(() => restarted.admission.stop());
    expect(refused?.code).to.equal("duplicate_guarantee");
    expect(refused?.details.certificate).to.deep.equal(current);
  });

  it("a revocation: the keeper waits for the new key, then answers past the committed deadline", async function () {
    const { f, tasks, cycle } = await disputed();
    const newSigner = coreSigner(NEW_SECRET);
    const newKey = publicKeyToEip2537(newSigner.publicKey);
    await f.vault.connect(f.admin).revokeOperatorKey();
    await f.vault.connect(f.admin).setOperatorKey(newKey); // scheduled
    const readyAt = BigInt(await time.latest()) + (await f.vault.timelockDelay());
    await advance(h!, 1);
    const log = capture();
    const keeper = keeperWith(tasks, newSigner, log.logger);
    expect((await keeper.tick()).answered).to.deep.equal([]);
    expect(log.lines.some((l) => String(l.reason).includes("the Vault has no operator key"))).to.equal(true);

    // Past the committed answer deadline: the chain refuses the void (window extended), nothing conceded.
    await time.increaseTo(cycle.answerDeadline + 1n);
    await advance(h!, 1);
    const waiting = await keeper.tick();
    expect(waiting.voided).to.deep.equal([]);
    expect(waiting.answered).to.deep.equal([]);

    await time.increaseTo(readyAt);
    await f.vault.connect(f.admin).setOperatorKey(newKey);
    await advance(h!, 1);
    const kept = await keeper.tick();
    expect(kept.voided).to.deep.equal([]);
    expect(kept.answered.map((a) => [a.position, a.conceded])).to.deep.equal([[0, false]]);
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(ANSWERED);
  });

  it("revoked, never replaced: past the extension the keeper reveals the tree and voids the position alone (A2-L1)", async function () {
    const { f, tasks, cycle } = await disputed(undefined, true);
    await f.vault.connect(f.admin).revokeOperatorKey();
    const until = await f.vault.answerDeadlineAfterKeyGap(cycle.answerDeadline);
    expect(until).to.be.greaterThan(cycle.paymentDeadline);
    const keeper = keeperWith(tasks, coreSigner(CORE_BLS_SECRET));
    await time.increaseTo(until + 1n);
    await advance(h!, 1);
    // alice's summary is not on chain: revealed first (no key needed), nothing voided whole.
    const revealing = await keeper.tick();
    expect([revealing.answered, revealing.voided]).to.deep.equal([[], []]);
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(4n); // Challenged
    await advance(h!, 1);
    const voiding = await keeper.tick();
    expect(voiding.voided).to.deep.equal([]);
    expect(voiding.answered.map((a) => [a.position, a.conceded])).to.deep.equal([[0, true]]);
    const debt = await f.clearingHouse.debtOf(1, ETH, f.alice.address);
    expect(debt.status).to.equal(ANSWERED);
    expect([ONE, 2n * ONE]).to.deep.include(debt.amount); // the position she did not dispute stays owed
    await expect(
      f.clearingHouse.connect(f.alice).voidUnansweredDebit(1, ETH, f.alice.address),
    ).to.be.revertedWithCustomError(f.clearingHouse, "DebtAlreadyResolved");
  });
});
