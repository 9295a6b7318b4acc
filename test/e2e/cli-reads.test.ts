/**
 * The CLI's sign-in and reads (scripts/cli/reads.ts: `login`, `logout`, `guarantees`, `guarantee <id>`,
 * `cycles`; issue 27 item 7) against the protocol stack as the other CLI test runs it: Core and the
 * facilitator over HTTP, the in-process chain over JSON-RPC (startRpcBridge), a deployment file naming
 * both. The commands are called as scripts/cli.ts calls them; `login` and `guarantee <id>` also run as
 * `npm run cli` runs them (a child process), for the session file's mode and the positional id.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect } from "chai";
import { blsKeyFromSecret } from "../../sdk/bls";
import { balance, deposit, type Flags } from "../../scripts/cli/commands";
import { CliContext, defaultSessionFile } from "../../scripts/cli/context";
import {
  checkGuaranteeCertificate,
  cycles,
  guarantee,
  guarantees,
  login,
  logout,
} from "../../scripts/cli/reads";
import { devAccount } from "../../scripts/devnet/accounts";
import { request } from "../operator/helpers";
import { CORE_BLS_SECRET } from "../operator/indexer-fixtures";
import { type ProtocolStack, startProtocolStack, startRpcBridge } from "./protocol-fixtures";

type Command = (ctx: CliContext, flags: Flags) => Promise<void>;

const ROOT = resolve(__dirname, "../..");
const [alice, bob, carol] = [2, 3, 4]; // dev account indexes (protocol-fixtures' ACCOUNT)

describe("CLI: login, guarantees, guarantee <id>, cycles against a running Core", function () {
  let s: ProtocolStack | undefined;
  let bridge: Awaited<ReturnType<typeof startRpcBridge>> | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await bridge?.close();
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    s = bridge = dir = undefined;
  });

  interface Setup {
    stack: ProtocolStack;
    file: string;
    session: string;
    /** Runs a command as `account` (a dev account index), or with no key at all; stdout then stderr. */
    cli(account: number | null, command: Command, flags?: Flags): Promise<string>;
    cliError(account: number | null, command: Command, flags?: Flags): Promise<string>;
  }

  async function setup(): Promise<Setup> {
    const stack = (s = await startProtocolStack());
    bridge = await startRpcBridge();
    dir = mkdtempSync(join(tmpdir(), "surety-e2e-cli-reads-"));
    const file = join(dir, "hardhat.json");
    writeFileSync(
      file,
      JSON.stringify({
        network: "hardhat",
        ...stack.f.record,
        urls: { rpc: bridge.url, core: stack.core.url },
      }),
    );
    const session = join(dir, "config", "surety", "cli-session.json");
    const cli = async (account: number | null, command: Command, flags: Flags = {}) => {
      const ctx = CliContext.load({
        network: "hardhat",
        deployment: file,
        session,
        ...(account === null ? {} : { account: String(account) }),
      });
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
    };
    const cliError = (account: number | null, command: Command, flags: Flags = {}) =>
      cli(account, command, flags).then(
        () => expect.fail("expected the command to fail"),
        (error: Error) => `${error.name}: ${error.message}`,
      );
    return { stack, file, session, cli, cliError };
  }

  function sessionFile(path: string) {
    return JSON.parse(readFileSync(path, "utf8")) as {
      version: number;
      sessions: Record<
        string,
        { address: string; access_token: string; refresh_token: string; access_token_expires_at: number }
      >;
    };
  }

  it("signs in once, then lists and checks the wallet's guarantees without the key; refreshes; logs out", async function () {
    const { stack, session, cli, cliError } = await setup();
    const { f, w } = stack;
    const core = stack.core.url;

    expect(await cliError(null, guarantees)).to.match(
      /CliError: not signed in to .*: run `npm run cli -- login/,
    );
    expect(await cliError(null, login)).to.match(/no key: pass --account/);
    expect(await cli(alice, login)).to.contain(`Signed in to ${core} as ${w.alice.address}.`);
    expect(statSync(session).mode & 0o777).to.equal(0o600);
    expect(statSync(join(session, "..")).mode & 0o777).to.equal(0o700);
    const stored = sessionFile(session).sessions[core];
    expect(stored.address).to.equal(w.alice.address);

    // Alice pays bob (V1) and carol (V2) through the facilitator.
    await cli(alice, deposit, { asset: "tUSD", amount: "1000", "base-units": true });
    await stack.round();
    const v1 = await stack.settle("alice", "bob", 300n, f.usdAddress);
    const v2 = await stack.settle("alice", "carol", 200n, f.usdAddress, { policy: {} });

    // A second login replaces the stored session and revokes the one it replaces on Core.
    const replaced = sessionFile(session).sessions[core];
    expect(await cli(alice, login)).to.contain(`Revoked the previous session (${w.alice.address})`);
    expect(sessionFile(session).sessions[core].refresh_token).to.not.equal(replaced.refresh_token);
    expect(
      (await request(core, "POST", "/auth/refresh", { json: { refresh_token: replaced.refresh_token } }))
        .status,
    ).to.equal(401);

    // balance: no key, the stored session reads Core's view of alice's collateral (500 locked of 1000).
    const balanceOut = await cli(null, balance, { asset: "tUSD" });
    expect(balanceOut).to.contain(`On chain (Vault ${f.vaultAddress}), ${w.alice.address}:`);
    expect(balanceOut).to.match(/Core's view \(.*\):\n +tUSD +deposited 1000, locked 500/);
    expect(await cli(null, balance, { address: w.bob.address })).to.contain(
      `Core's view: only ${w.bob.address} itself (or a facilitator) may read it`,
    );

    // No key: the stored session reads alice's guarantees, newest first.
    const listed = await cli(null, guarantees);
    expect(listed).to.contain(`Guarantees with ${w.alice.address} as payer, newest first: 2`);
    expect(listed.indexOf(v2.id)).to.be.greaterThan(-1);
    expect(listed.indexOf(v2.id)).to.be.lessThan(listed.indexOf(v1.id));
    expect(listed).to.contain(`0.0003 tUSD (300 base units) to ${w.bob.address}`);
    const payable = await cli(null, guarantees, { state: "finalized_payable" });
    expect(payable).to.contain(v1.id).and.not.contain(v2.id);
    expect(await cli(null, guarantees, { as: "recipient" })).to.contain("as recipient, newest first: 0");
    const paged = JSON.parse(await cli(null, guarantees, { limit: "1", json: true })) as {
      guarantees: { guarantee_id: string }[];
      next_cursor: string;
    };
    expect(paged.guarantees.map((g) => g.guarantee_id)).to.deep.equal([v2.id]);
    expect(await cli(null, guarantees, { limit: "1", cursor: paged.next_cursor })).to.contain(v1.id);
    expect(await cliError(null, guarantees, { as: "validator" })).to.match(
      /--as: must be payer or recipient/,
    );
    expect(await cliError(null, guarantees, { state: "PAID" })).to.match(/--state: must be one of/);

    // One guarantee: the view, its timeline, its certificate checked against the Vault's key.
    const shown = await cli(null, guarantee, { id: v1.id });
    expect(shown).to.contain(`Guarantee ${v1.id}`);
    expect(shown).to.match(/state +FINALIZED_PAYABLE/);
    expect(shown).to.match(/amount +0\.0003 tUSD \(300 base units\)/);
    expect(shown).to.match(/core +issued \{"amount":"300","version":1\}/);
    expect(shown).to.match(/core +state \{"state":"FINALIZED_PAYABLE"\}/);
    const vaultKey = `0x${Buffer.from(blsKeyFromSecret(CORE_BLS_SECRET).publicKey).toString("hex")}`;
    expect(shown).to.contain(`Certificate (checked here; Vault operator key ${vaultKey})`);
    expect(shown).to.contain("ok BLS signature valid against the Vault's operator key");
    expect(shown).to.contain(`bound to chain 31337 and Vault ${f.vaultAddress}`);
    expect(await cli(null, guarantee, { id: v2.id })).to.match(/policy +validator .*tag "quality"/);

    // Bob, with his key and no stored session of his own, signs in for this run only; carol may not read v1.
    expect(await cli(bob, guarantees, { as: "recipient" }))
      .to.contain(v1.id)
      .and.not.contain(v2.id);
    expect(Object.keys(sessionFile(session).sessions)).to.deep.equal([core]);
    expect(sessionFile(session).sessions[core].address).to.equal(w.alice.address);
    expect(await cliError(carol, guarantee, { id: v1.id })).to.match(
      /guarantee 0x[0-9a-f]{64} not found, or not visible to 0x/,
    );

    // The cycle: committed, listed, and in the guarantee's timeline.
    expect(await cli(null, cycles)).to.contain(`No committed cycle at ${core} yet.`);
    await stack.advance(f.timings.cycleLength);
    expect((await stack.round()).scheduler).to.include({ action: "committed", cycleId: 1 });
    const listedCycles = await cli(alice, cycles);
    expect(listedCycles).to.match(/#1 COMMITTED: 1 guarantee, committed .* \(tx 0x[0-9a-f]{64}\)/);
    expect(listedCycles).to.contain("0.0003 tUSD (300 base units) netted; 1 debtor (1 unresolved)");
    expect(listedCycles).to.contain("you owe 0.0003 tUSD (300 base units): OPEN");
    expect(await cli(null, cycles, { json: true })).to.match(/"cycle_id": 1/);
    const netted = await cli(null, guarantee, { id: v1.id });
    expect(netted).to.match(/state +NETTED/);
    expect(netted).to.match(/chain +netted \(cycle 1, tx 0x[0-9a-f]{64}, block \d+\)/);

    // An access token Core refuses (401) is refreshed once and the read retried.
    const refusedToken = sessionFile(session);
    refusedToken.sessions[core].access_token = "not-a-jwt";
    writeFileSync(session, JSON.stringify(refusedToken), { mode: 0o600 });
    expect(await cli(null, guarantees)).to.contain(v1.id);
    expect(sessionFile(session).sessions[core].access_token).to.not.equal("not-a-jwt");

    // An access token past its time is refreshed; the rotated refresh token is stored, the spent one is dead.
    const before = sessionFile(session).sessions[core];
    const expired = sessionFile(session);
    expired.sessions[core].access_token_expires_at = 0;
    writeFileSync(session, JSON.stringify(expired), { mode: 0o600 });
    expect(await cli(null, guarantees)).to.contain(v1.id);
    const after = sessionFile(session).sessions[core];
    expect(after.refresh_token).to.not.equal(before.refresh_token);
    expect(after.access_token_expires_at).to.be.greaterThan(Math.floor(Date.now() / 1000));
    const reuse = await request(core, "POST", "/auth/refresh", {
      json: { refresh_token: before.refresh_token },
    });
    expect(reuse.status).to.equal(401);
    // Core revoked the session on that reuse (a leak, to Core). The access token in hand still works until
    // its time (stateless); past it the refresh is refused, and without a key the CLI says to sign in again.
    expect(await cli(null, guarantees)).to.contain(v1.id);
    const revoked = sessionFile(session);
    revoked.sessions[core].access_token_expires_at = 0;
    writeFileSync(session, JSON.stringify(revoked), { mode: 0o600 });
    expect(await cliError(null, guarantees)).to.match(
      /the session stored for .* is no longer valid: .*refresh_token_(reused|revoked).*sign in again/,
    );
    expect(sessionFile(session).sessions).to.deep.equal({});

    // With alice's key the CLI signs in again and stores the new session; logout revokes and forgets it.
    await cli(alice, login);
    const renewed = sessionFile(session).sessions[core];
    expect(await cli(null, logout)).to.contain(`Signed ${w.alice.address} out of ${core}`);
    expect(sessionFile(session).sessions).to.deep.equal({});
    expect(
      (await request(core, "POST", "/auth/refresh", { json: { refresh_token: renewed.refresh_token } }))
        .status,
    ).to.equal(401);
    expect(await cli(null, logout)).to.contain("No session for");
  });

  it("the certificate check fails on claims that are not the certificate's, or another key", async function () {
    const { stack, cli } = await setup();
    const { f } = stack;
    await cli(alice, deposit, { asset: "tUSD", amount: "1000", "base-units": true });
    await stack.round();
    const v1 = await stack.settle("alice", "bob", 300n, f.usdAddress);
    const view = (await stack.coreAs("alice", "GET", `/core/guarantees/${v1.id}`)).body;
    const key = blsKeyFromSecret(CORE_BLS_SECRET).publicKey;
    const deployment = { chainId: 31337, vault: f.vaultAddress };
    expect(checkGuaranteeCertificate(view, key, deployment).ok).to.equal(true);
    const other = checkGuaranteeCertificate(
      view,
      blsKeyFromSecret("0x" + "07".repeat(32)).publicKey,
      deployment,
    );
    expect(other.ok).to.equal(false);
    expect(other.lines[0]).to.match(/BLS signature INVALID/);
    const more = checkGuaranteeCertificate(
      { ...view, claims: { ...view.claims, amount: "301" } },
      key,
      deployment,
    );
    expect(more.ok).to.equal(false);
    expect(more.lines[1]).to.match(/the signed claims differ from the guarantee Core shows/);
    const elsewhere = checkGuaranteeCertificate(view, key, { chainId: 1, vault: f.vaultAddress });
    expect(elsewhere.ok).to.equal(false);
  });

  it("runs as npm run cli does: login stores a 0600 session file, guarantee takes the id as an argument", async function () {
    const { stack, file, cli } = await setup();
    const { f, w } = stack;
    await cli(alice, deposit, { asset: "tUSD", amount: "1000", "base-units": true });
    await stack.round();
    const v1 = await stack.settle("alice", "bob", 300n, f.usdAddress);
    // The key from a file (not a flag value in the process list); the session where XDG_CONFIG_HOME says.
    const keyFile = join(dir!, "alice.key");
    writeFileSync(keyFile, `${devAccount(alice).privateKey}\n`, { mode: 0o600 });
    const env = { XDG_CONFIG_HOME: join(dir!, "xdg") };
    const expectedSession = defaultSessionFile({ XDG_CONFIG_HOME: env.XDG_CONFIG_HOME });
    expect(expectedSession).to.equal(join(dir!, "xdg", "surety", "cli-session.json"));

    const signedIn = await runCli(["login", "--deployment", file, "--key-file", keyFile], env);
    expect(signedIn.code, signedIn.output).to.equal(0);
    expect(signedIn.output).to.contain(`as ${w.alice.address}`).and.contain(expectedSession);
    expect(statSync(expectedSession).mode & 0o777).to.equal(0o600);

    const shown = await runCli(["guarantee", v1.id, "--deployment", file], env);
    expect(shown.code, shown.output).to.equal(0);
    expect(shown.output).to.contain(`Guarantee ${v1.id}`).and.contain("ok BLS signature valid");
    const twice = await runCli(["guarantee", v1.id, v1.id, "--deployment", file], env);
    expect(twice.code).to.equal(2);
    expect(twice.output).to.contain("guarantee: takes one id");
  });
});

/** `npm run cli -- <args>` (ts-node, transpile only) in the repository root; exit code and all output. */
function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("SURETY_") && name !== "XDG_CONFIG_HOME"),
  );
  const child = spawn(
    process.execPath,
    ["-r", "ts-node/register/transpile-only", "scripts/cli.ts", ...args],
    {
      cwd: ROOT,
      env: { ...inherited, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((done) => child.once("exit", (code) => done({ code, output })));
}
