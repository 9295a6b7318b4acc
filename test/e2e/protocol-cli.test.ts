/**
 * The CLI's clearing and remuneration commands (scripts/cli/commands.ts: `deposit`, `remunerate`,
 * `pay-net-debit`, `claim-net-credit`, `dispute-guarantee`, `void-debit`) against a real cycle: the command functions are called as
 * `scripts/cli.ts` calls them, with a CliContext read from a deployment file, talking to the in-process
 * chain over HTTP JSON-RPC (startRpcBridge) and to Core over HTTP (test/e2e/protocol-fixtures.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { GuaranteeClaimsV2 } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import {
  disputeGuarantee,
  claimNetCredit,
  withdrawPayout,
  deposit,
  type Flags,
  payNetDebit,
  registerReserve,
  remunerate,
  voidDebit,
} from "../../scripts/cli/commands";
import { CliContext } from "../../scripts/cli/context";
import { keccak256, toUtf8Bytes } from "ethers";
import {
  CHAIN_ID,
  type ProtocolStack,
  expectBooksAgree,
  startProtocolStack,
  startRpcBridge,
} from "./protocol-fixtures";

type Command = (ctx: CliContext, flags: Flags) => Promise<void>;

describe("protocol end to end: the CLI pays, claims and remunerates against a real cycle", function () {
  let s: ProtocolStack | undefined;
  let bridge: Awaited<ReturnType<typeof startRpcBridge>> | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await bridge?.close();
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    s = bridge = dir = undefined;
  });

  /** Runs one CLI command as dev account `account`; returns what it printed (stdout, then stderr). */
  async function cli(deploymentFile: string, account: number, command: Command, flags: Flags) {
    const ctx = CliContext.load({ network: "hardhat", deployment: deploymentFile, account: String(account) });
    const out: string[] = [];
    const log = console.log;
    const write = process.stderr.write.bind(process.stderr);
    console.log = (...args: unknown[]) => void out.push(args.map(String).join(" "));
    process.stderr.write = ((chunk: string) =>
      out.push(String(chunk).trimEnd()) > 0) as typeof process.stderr.write;
    try {
      await command(ctx, flags);
      return out.join("\n");
    } finally {
      console.log = log;
      process.stderr.write = write;
      ctx.provider.destroy();
    }
  }

  async function cliError(deploymentFile: string, account: number, command: Command, flags: Flags) {
    return cli(deploymentFile, account, command, flags).then(
      () => expect.fail("expected the command to fail"),
      (error: Error) => `${error.name}: ${error.message}`,
    );
  }

  /** The protocol stack, an RPC bridge to its chain and a deployment file naming both, for the CLI. */
  async function stackWithDeploymentFile(): Promise<{ stack: ProtocolStack; file: string }> {
    const stack = (s = await startProtocolStack());
    bridge = await startRpcBridge();
    dir = mkdtempSync(join(tmpdir(), "surety-e2e-cli-"));
    const file = join(dir, "hardhat.json");
    const urls = { rpc: bridge.url, core: stack.core.url };
    writeFileSync(file, JSON.stringify({ network: "hardhat", ...stack.f.record, urls }));
    return { stack, file };
  }

  const [alice, bob, carol] = [2, 3, 4]; // dev account indexes (protocol-fixtures' ACCOUNT)

  it("deposit, remunerate, pay-net-debit and claim-net-credit do what they say, and Core follows", async function () {
    const { stack, file } = await stackWithDeploymentFile();
    const { f, w } = stack;
    const usd = f.usdAddress;
    s = stack; // (already set by the helper) narrows `s` for the calls below
    const wallets = {
      bob: await f.usd.balanceOf(w.bob.address),
      carol: await f.usd.balanceOf(w.carol.address),
    };

    expect(await cli(file, alice, deposit, { asset: "tUSD", amount: "1000", "base-units": true })).to.match(
      /Vault balance of .*: 0\.001 tUSD \(1000 base units\)/,
    );
    await s.round();
    expect(await s.balanceOf("alice", usd)).to.include({ deposited: "1000" });

    // A V2 guarantee to carol, validated, remunerated through the CLI with the certificate JSON.
    const v2 = await s.settle("alice", "carol", 200n, usd, { policy: {} });
    const { policy } = v2.claims as GuaranteeClaimsV2;
    const requestHash = validationRequestHash(CHAIN_ID, policy, v2.id);
    await f.validationRegistry
      .connect(w.carol)
      .validationRequest(policy.validator, policy.agentId, "ipfs://job", requestHash);
    await f.validationRegistry
      .connect(w.validator)
      .validationResponse(requestHash, 95, "ipfs://verdict", keccak256(toUtf8Bytes("ok")), policy.tag);
    const certificate = JSON.stringify({ certificate: v2.certificate });
    expect(await cliError(file, carol, remunerate, { certificate })).to.match(
      /--payer-signature is required/,
    );
    expect(
      await cliError(file, carol, remunerate, {
        certificate,
        "payer-signature": v2.payer.signature,
        scheme: "eip191",
      }),
    ).to.match(/CliError: remunerate: reverted with InvalidPayerSignature/);
    // Core's guarantee view carries the payer's scheme and signature along with the certificate.
    const view = JSON.stringify((await s.coreAs("carol", "GET", `/core/guarantees/${v2.id}`)).body);
    // The seller first holds the amount on chain (the seller's reserve), then remunerates out of it.
    expect(await cli(file, carol, registerReserve, { certificate: view })).to.contain(
      `Reserved guarantee ${v2.id}`,
    );
    expect((await f.vault.reserveOf(v2.id)).amount).to.equal(200n);
    expect(await cliError(file, carol, registerReserve, { certificate: view })).to.match(
      /CliError: registerReserve: reverted with ReserveAlreadyRegistered/,
    );
    expect(await cli(file, carol, remunerate, { certificate: view })).to.contain(
      `Remunerated guarantee ${v2.id}`,
    );
    expect(await f.usd.balanceOf(w.carol.address)).to.equal(wallets.carol + 200n);
    // Free collateral covered the payment, so the reserve stayed behind; anyone releases it now.
    await expect(f.vault.releaseReserve(v2.id)).to.emit(f.vault, "ReserveReleased");
    expect(
      await cliError(file, carol, remunerate, { certificate, "payer-signature": v2.payer.signature }),
    ).to.match(/CliError: remunerate: reverted with GuaranteeAlreadyConsumed/);

    // A V1 guarantee to bob, committed in cycle 1.
    const v1 = await s.settle("alice", "bob", 300n, usd);
    expect(
      await cliError(file, alice, remunerate, {
        certificate: JSON.stringify(v1.certificate),
        "payer-signature": v1.payer.signature,
      }),
    ).to.match(/only V2 certificates/);
    await s.round();
    expect(await s.stateOf("alice", v2.id)).to.equal("REMUNERATED");
    await s.advance(f.timings.cycleLength);
    expect((await s.round()).scheduler).to.include({ action: "committed", cycleId: 1, guarantees: 1 });

    // Bob cannot claim inside the challenge window, nor before alice pays; alice pays with the CLI;
    // bob claims with Core's proof.
    expect(await cliError(file, bob, claimNetCredit, { cycle: "1", asset: "tUSD" })).to.match(
      /ChallengeWindowOpen/,
    );
    await s.advance(f.timings.challengeWindow + 1);
    expect(await cliError(file, bob, claimNetCredit, { cycle: "1", asset: "tUSD" })).to.match(
      /CreditNotYetFunded/,
    );
    expect(await cli(file, alice, payNetDebit, { cycle: "1", asset: "tUSD" })).to.contain(
      "Paid the net debit of cycle 1",
    );
    expect(await cliError(file, alice, payNetDebit, { cycle: "1", asset: "tUSD" })).to.match(
      /has no open or answered tUSD debit in cycle 1 \(paid\)/,
    );
    expect(await cliError(file, carol, claimNetCredit, { cycle: "1", asset: "tUSD" })).to.match(
      /Core answered 404 .*position_not_found/,
    );
    const claimed = await cli(file, bob, claimNetCredit, { cycle: "1", asset: "tUSD" });
    expect(claimed).to.contain(`Claimed 0.0003 tUSD (300 base units) for ${w.bob.address} from cycle 1`);
    // The ClearingHouse sets the credit aside (pull payment); the command withdraws bob's own to his wallet.
    expect(claimed).to.contain(
      `Withdrew 0.0003 tUSD (300 base units) from the ClearingHouse to ${w.bob.address}`,
    );
    expect(await cliError(file, bob, withdrawPayout, { asset: "tUSD" })).to.match(
      /nothing is set aside for .* in tUSD in the ClearingHouse/,
    );
    await s.round();

    // Chain and Core agree.
    expect(await s.stateOf("alice", v1.id)).to.equal("SETTLED");
    expect(await f.usd.balanceOf(w.bob.address)).to.equal(wallets.bob + 300n);
    expect(await f.vault.balanceOf(w.alice.address, usd)).to.equal(800n);
    // Only the operator bond is left: every credit was claimed and withdrawn.
    expect(await f.usd.balanceOf(f.clearingHouseAddress)).to.equal(await f.clearingHouse.bondOf(usd));
    await expectBooksAgree(s, "alice", usd, 0n);
    expect(await s.balanceOf("alice", usd)).to.include({ deposited: "800", available: "800" });
  });

  it("dispute-guarantee and void-debit play the payer's side of the dispute game", async function () {
    const { stack, file } = await stackWithDeploymentFile();
    const { f, w } = stack;
    const usd = f.usdAddress;
    await cli(file, alice, deposit, { asset: "tUSD", amount: "1000", "base-units": true });
    await stack.round();
    await stack.settle("alice", "bob", 300n, usd);
    await stack.advance(f.timings.cycleLength);
    expect((await stack.round()).scheduler).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    const cycle = { cycle: "1", asset: "tUSD" };

    expect(await cliError(file, bob, disputeGuarantee, cycle)).to.match(
      /has no open or challenged or answered tUSD debit in cycle 1 \(none\)/,
    );
    expect(await cliError(file, alice, voidDebit, cycle)).to.match(
      /has no challenged tUSD debit in cycle 1 \(open\)/,
    );
    expect(await cli(file, alice, disputeGuarantee, { ...cycle, position: "0" })).to.contain(
      "Disputed position 0 of your net debit in cycle 1 (0.0003 tUSD (300 base units))",
    );
    // A challenged debit cannot be paid (paying would accept it), nor voided before the answer deadline.
    expect(await cliError(file, alice, payNetDebit, cycle)).to.match(/\(challenged\)/);
    expect(await cliError(file, bob, voidDebit, { ...cycle, debtor: w.alice.address })).to.match(
      /reverted with AnswerWindowOpen\(1, /,
    );

    // Core's keeper is not run here, so the dispute stays unanswered; past the answer deadline anyone voids it.
    await stack.advance(2 * f.timings.challengeWindow + 1);
    expect(await cli(file, bob, voidDebit, { ...cycle, debtor: w.alice.address })).to.contain(
      `Voided the unanswered net debit of ${w.alice.address} in cycle 1: 0.0003 tUSD (300 base units)`,
    );
    expect((await f.clearingHouse.debtOf(1, usd, w.alice.address)).status).to.equal(6n); // Voided
    expect(await f.vault.obligationOf(w.alice.address, usd)).to.equal(0n);
    expect(await cliError(file, alice, voidDebit, cycle)).to.match(/\(voided\)/);
  });
});
