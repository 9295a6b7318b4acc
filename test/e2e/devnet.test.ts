/**
 * `scripts/devnet.ts` as a user runs it: a child process on free ports with its own data directory and
 * deployment file. It must print its ready line, serve healthy Core and facilitator, write a deployment
 * whose contracts exist on its chain, refuse a second run on the same ports naming the port and the
 * process, and on SIGINT stop every service and free every port.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { JsonRpcProvider, Wallet } from "ethers";
import { writeDeployment } from "../../scripts/deploy";
import { DEVNET_ROLES, devAccount } from "../../scripts/devnet/accounts";
import { deploymentTempFile } from "../../scripts/devnet/contracts";
import { devnetOptionsFromEnv } from "../../scripts/devnet/options";
import { isPortFree } from "../../scripts/devnet/ports";
import { signIn } from "../operator/helpers";

const ROOT = path.resolve(__dirname, "../..");
const READY = /devnet ready: rpc=(\S+) core=(\S+) facilitator=(\S+)/;
// A bound on the devnet's start (node, deploy, Core, facilitator: ≈ 15–35 s on the 2-core machine), not a
// speed requirement: loaded machines went past 45 s.
const START_TIMEOUT_MS = 90_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function runDevnet(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "scripts/devnet.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitForOutput(run: Run, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = run.output().match(pattern);
    if (match) return match;
    if (run.child.exitCode !== null)
      throw new Error(`devnet exited (${run.child.exitCode}):\n${run.output()}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Last resort after a failed test: the devnet's state file names its services' process groups. */
function killLeftovers(dataDir: string): void {
  try {
    const state = JSON.parse(readFileSync(path.join(dataDir, "devnet.json"), "utf8")) as {
      services: Record<string, number>;
    };
    for (const pid of Object.values(state.services)) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
  } catch {
    // no state file: nothing was started, or it stopped cleanly
  }
}

describe("npm run devnet (scripts/devnet.ts)", function () {
  this.timeout(START_TIMEOUT_MS + 60_000); // the start, then the checks and a clean stop
  let dir: string;
  let run: Run | undefined;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "surety-devnet-"));
  });

  after(async () => {
    if (run && run.child.exitCode === null) {
      run.child.kill("SIGINT");
      await Promise.race([run.exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
      run.child.kill("SIGKILL");
    }
    killLeftovers(path.join(dir, "data"));
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts everything, refuses a second run on its ports, and stops cleanly on SIGINT", async () => {
    const ports = { rpc: await freePort(), core: await freePort(), facilitator: await freePort() };
    const deploymentFile = path.join(dir, "localhost.json");
    const env = {
      SURETY_DEVNET_RPC_PORT: String(ports.rpc),
      SURETY_DEVNET_CORE_PORT: String(ports.core),
      SURETY_DEVNET_FACILITATOR_PORT: String(ports.facilitator),
      SURETY_DEVNET_DATA_DIR: path.join(dir, "data"),
      SURETY_DEVNET_DEPLOYMENT_FILE: deploymentFile,
      SURETY_DEVNET_CYCLE_SECONDS: "20",
    };
    run = runDevnet(env);
    const [, rpcUrl, coreUrl, facilitatorUrl] = await waitForOutput(run, READY, START_TIMEOUT_MS);
    expect(rpcUrl).to.equal(`http://127.0.0.1:${ports.rpc}`);
    expect(coreUrl).to.equal(`http://127.0.0.1:${ports.core}`);
    expect(facilitatorUrl).to.equal(`http://127.0.0.1:${ports.facilitator}`);

    expect((await fetch(`${coreUrl}/core/health`)).status).to.equal(200);
    expect((await fetch(`${facilitatorUrl}/health`)).status).to.equal(200);

    const deployment = JSON.parse(readFileSync(deploymentFile, "utf8"));
    expect(deployment.network).to.equal("localhost");
    expect(deployment.chainId).to.equal(31337);
    expect(deployment.urls).to.deep.equal({ rpc: rpcUrl, core: coreUrl, facilitator: facilitatorUrl });
    expect(deployment.config.timings.cycleLength).to.equal(20);
    expect(
      deployment.tokens.map((t: { symbol: string; decimals: number }) => [t.symbol, t.decimals]),
    ).to.deep.equal([
      ["tUSD", 6],
      ["tETH", 18],
    ]);
    const provider = new JsonRpcProvider(rpcUrl, 31337, { staticNetwork: true });
    try {
      for (const name of ["Vault", "ClearingHouse", "ValidationRegistry"]) {
        const { address, blockNumber } = deployment.contracts[name];
        expect(await provider.getCode(address), name).to.not.equal("0x");
        expect(blockNumber, name).to.be.greaterThan(0);
      }
      // Chain time stays on the wall clock (scripts/devnet/node.config.ts): deploying and funding took
      // dozens of transactions, which push a plain automine chain that many seconds ahead. The latest
      // block may be up to a block interval (1 s) old, and whole seconds round down.
      const latest = (await provider.getBlock("latest"))!;
      expect(latest.number).to.be.greaterThan(30);
      const drift = latest.timestamp - Date.now() / 1000;
      expect(drift).to.be.at.most(1).and.at.least(-5);
    } finally {
      provider.destroy();
    }
    const params = (await (await fetch(`${coreUrl}/core/public-params`)).json()) as {
      contract_address: string;
    };
    expect(params.contract_address).to.equal(deployment.contracts.Vault.address);
    // The console's admin is the deployer (#0) by default: it reads the admin API, a buyer (#1) does not.
    const adminRead = async (index: number) => {
      const { access_token } = await signIn(coreUrl, new Wallet(devAccount(index).privateKey));
      return (
        await fetch(`${coreUrl}/core/admin/webhooks`, {
          headers: { authorization: `Bearer ${access_token}` },
        })
      ).status;
    };
    expect(await adminRead(DEVNET_ROLES.deployer)).to.equal(200);
    expect(await adminRead(1)).to.equal(403);
    const supported = (await (await fetch(`${facilitatorUrl}/supported`)).json()) as {
      kinds: { network: string }[];
    };
    expect(supported.kinds[0].network).to.equal("eip155:31337");

    // A second devnet on the same ports (another data dir) refuses to start and says who holds the port.
    const second = runDevnet({ ...env, SURETY_DEVNET_DATA_DIR: path.join(dir, "data2") });
    expect(await second.exited).to.equal(1);
    expect(second.output()).to.contain(`port ${ports.rpc} (chain RPC) is in use by pid`);
    expect(second.output()).to.contain(`port ${ports.core} (Core) is in use by pid`);

    run.child.kill("SIGINT");
    expect(await run.exited).to.equal(0);
    expect(run.output()).to.match(/ports .* free/);
    for (const port of Object.values(ports))
      expect(await isPortFree("127.0.0.1", port), `port ${port}`).to.equal(true);
  });
});

describe("files the devnet and the deploy script write into the project", function () {
  /** Whether git ignores `file` (a path inside the project; it need not exist). */
  function ignored(file: string): boolean {
    try {
      execFileSync("git", ["check-ignore", "--quiet", "--no-index", path.relative(ROOT, file)], {
        cwd: ROOT,
      });
      return true;
    } catch {
      return false;
    }
  }

  it("are all ignored by git: a fresh clone stays clean after `npm run devnet` and a local deploy", function () {
    if (!existsSync(path.join(ROOT, ".git"))) this.skip(); // not a git checkout (e.g. an unpacked tarball)
    const devnet = devnetOptionsFromEnv({}, ROOT);
    // The deploy script's own naming, for the two local networks (written under a scratch root here).
    const scratch = mkdtempSync(path.join(tmpdir(), "surety-deploy-"));
    const local = ["hardhat", "localhost"].map((network) =>
      path.join(ROOT, path.relative(scratch, writeDeployment(network, {} as never, scratch))),
    );
    rmSync(scratch, { recursive: true, force: true });
    const written = [
      devnet.deploymentFile,
      deploymentTempFile(devnet.deploymentFile, 4242),
      ...local,
      path.join(devnet.dataDir, "devnet.json"),
      path.join(devnet.dataDir, "logs", "core.log"),
      path.join(devnet.dataDir, "core", "operator.sqlite-wal"),
    ];
    for (const file of written) expect(ignored(file), path.relative(ROOT, file)).to.equal(true);
    // A deployment to a real network stays visible (it is worth committing).
    expect(ignored(path.join(ROOT, "deployments", "sepolia.json"))).to.equal(false);
  });
});
