/**
 * The published packages as an integrator gets them. packages/build.ts builds and `npm pack`s @surety/sdk,
 * @surety/x402 and @surety/devnet; a fresh app in a temp dir outside the repository (a copy of
 * examples/packaged-app, nothing linked back) installs the three tarballs with the official `@x402/*`
 * packages (the repository's versions, from npm's cache when it has them), type-checks against them under
 * TypeScript's node16, node20 and bundler resolution, loads them from CommonJS and ES modules, and buys and
 * sells on a devnet started with `startDevnet` from the installed @surety/devnet: x402 v2 on
 * `@x402/express` + `@x402/fetch` (a paid 200, a refusal, a replay refused, and refused again after the
 * seller restarts on its durable ledger: `SqlitePaymentLedger` with better-sqlite3 as the app's own
 * dependency), x402 v1 on the paywall.
 */
import { builtinModules } from "node:module";
import { type ChildProcess, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { PACKAGES, type PackageKey } from "../../packages/build";
import { killDevnetServices } from "../../packages/devnet/src";

const ROOT = path.resolve(__dirname, "../..");
const APP_SOURCE = path.join(ROOT, "examples", "packaged-app");
/** What the app installs beside the tarballs, at the repository's versions. */
const OFFICIAL = [
  "@x402/core",
  "@x402/express",
  "@x402/fetch",
  "express",
  "ethers",
  // The app's own, for @surety/x402/sqlite-ledger (an optional peer of @surety/x402).
  "better-sqlite3",
  "@types/better-sqlite3",
  "typescript",
  "@types/node",
  "@types/express",
];

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as Manifest;
}

const root = readManifest(ROOT);
function rootVersion(name: string): string {
  const version = root.dependencies?.[name] ?? root.devDependencies?.[name];
  if (version === undefined) throw new Error(`${name} is not a dependency of the repository`);
  return version;
}

/** Whether `version` (x.y.z) satisfies a `^x.y.z` or exact range (the only forms the packages use). */
function satisfies(version: string, range: string): boolean {
  if (!range.startsWith("^")) return version === range;
  const want = range.slice(1).split(".").map(Number);
  const have = version.split(".").map(Number);
  if (have[0] !== want[0]) return false;
  for (let i = 1; i < 3; i++) if (have[i] !== want[i]) return have[i] > want[i];
  return true;
}

/** Environment of the npm and node children: no npm_* of the `npm test` running us, no TS loader. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^npm_/i.test(name) && !name.startsWith("TS_NODE_") && name !== "NODE_OPTIONS",
    ),
  );
  return { ...env, ...extra };
}

interface Run {
  child: ChildProcess;
  done: Promise<{ code: number | null; output: string }>;
}

/** Runs a command in its own process group (so that a failed test can stop all of it). */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = childEnv()): Run {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<{ code: number | null; output: string }>((resolve) => {
    child.once("error", (error) => resolve({ code: null, output: output + String(error) }));
    child.once("close", (code) => resolve({ code, output }));
  });
  return { child, done };
}

async function succeed(command: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv) {
  const { code, output } = await run(command, args, cwd, env).done;
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${code}:\n${output}`);
  return output;
}

/** The last line of `output` that is a JSON object. */
function lastJson(output: string): Record<string, unknown> {
  const line = output
    .trim()
    .split("\n")
    .reverse()
    .find((l) => l.startsWith("{"));
  if (line === undefined) throw new Error(`no JSON line in:\n${output}`);
  return JSON.parse(line) as Record<string, unknown>;
}

/** Bare modules a package's compiled JavaScript requires (package names, node built-ins left out). */
function requiredPackages(dir: string): Set<string> {
  const found = new Set<string>();
  const visit = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (/\.(c?js|mjs)$/.test(entry.name)) {
        for (const match of readFileSync(file, "utf8").matchAll(
          /\b(?:require\(|from\s+|import\()["']([^"'.][^"']*)["']/g,
        )) {
          const specifier = match[1];
          if (specifier.startsWith("node:") || builtinModules.includes(specifier)) continue;
          const parts = specifier.split("/");
          found.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]);
        }
      }
    }
  };
  visit(dir);
  return found;
}

describe("packages: a fresh app outside the repository on the packed tarballs", function () {
  let work: string;
  let app: string;
  let devnetDir: string;
  let running: Run | null = null;

  before(async function () {
    // Build (≈ 30 s), pack, and install into a fresh app (≈ 1–2 min: hardhat, better-sqlite3 from source).
    this.timeout(8 * 60_000);
    work = mkdtempSync(path.join(tmpdir(), "surety-packages-"));
    if (!path.relative(ROOT, work).startsWith("..")) throw new Error(`${work} is inside the repository`);
    const packed = path.join(work, "packed");
    const built = await succeed(
      process.execPath,
      ["-r", "ts-node/register/transpile-only", "packages/build.ts", "pack", packed],
      ROOT,
      childEnv({ TS_NODE_TRANSPILE_ONLY: "true" }),
    );
    const tarballs = built
      .trim()
      .split("\n")
      .filter((line) => line.endsWith(".tgz"));
    expect(tarballs).to.have.length(3);

    app = path.join(work, "app");
    devnetDir = path.join(work, "devnet");
    cpSync(APP_SOURCE, app, {
      recursive: true,
      filter: (source) => !/(^|\/)(node_modules|dist)(\/|$)/.test(path.relative(APP_SOURCE, source)),
    });
    writeFileSync(
      path.join(app, "package.json"),
      JSON.stringify({ name: "surety-packaged-app", private: true, type: "module" }, null, 2) + "\n",
    );
    const official = OFFICIAL.map((name) => `${name}@${rootVersion(name)}`);
    // --prefer-offline: npm's cache first (these machines reach only the npm registry, if anything).
    await succeed(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", ...tarballs, ...official],
      app,
      // better-sqlite3 has no prebuilt binary to download here: straight to its source build.
      childEnv({ npm_config_build_from_source: "better-sqlite3" }),
    );
    // The app's build: TypeScript with `"module": "node20"` (its tsconfig.json), into dist/.
    await succeed(process.execPath, [tsc(), "-p", "tsconfig.json", "--skipLibCheck"], app);
  });

  const tsc = () => path.join(app, "node_modules", "typescript", "bin", "tsc");

  after(async function () {
    this.timeout(60_000);
    if (running !== null && running.child.exitCode === null && running.child.signalCode === null) {
      // The app and the devnet script it started share the app's process group: SIGINT stops the devnet.
      try {
        process.kill(-running.child.pid!, "SIGINT");
      } catch {
        // gone
      }
      const timeout = new Promise((resolve) => setTimeout(resolve, 30_000).unref());
      await Promise.race([running.done, timeout]);
      try {
        process.kill(-running.child.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }
    if (devnetDir !== undefined) killDevnetServices(devnetDir);
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it("declare every package their compiled code loads, at versions the repository uses", function () {
    const sdk = readManifest(PACKAGES.sdk.dir);
    for (const key of Object.keys(PACKAGES) as PackageKey[]) {
      const manifest = readManifest(PACKAGES[key].dir);
      expect(manifest.version, manifest.name).to.equal(root.version);
      const declared = { ...manifest.dependencies, ...manifest.peerDependencies };
      const undeclared = [...requiredPackages(path.join(PACKAGES[key].dir, "dist"))].filter(
        (name) => !(name in declared),
      );
      expect(undeclared, `${manifest.name} loads modules it does not declare`).to.deep.equal([]);
      for (const [name, range] of Object.entries(declared)) {
        const version = name === sdk.name ? sdk.version : rootVersion(name);
        expect(satisfies(version, range), `${manifest.name}: ${name} ${range} vs ${version}`).to.equal(true);
      }
    }
  });

  it("installs from the tarballs alone: no path or link back into the repository", function () {
    // better-sqlite3 is the app's own dependency (the durable replay ledger), not only @surety/devnet's.
    expect(readManifest(app).dependencies).to.have.property("better-sqlite3");
    const lock = readFileSync(path.join(app, "package-lock.json"), "utf8");
    expect(lock).not.to.include(ROOT);
    for (const key of Object.keys(PACKAGES) as PackageKey[]) {
      const installed = path.join(app, "node_modules", PACKAGES[key].name);
      expect(lstatSync(installed).isSymbolicLink(), installed).to.equal(false);
      expect(realpathSync(installed).startsWith(ROOT)).to.equal(false);
      expect(existsSync(path.join(installed, "dist"))).to.equal(true);
    }
  });

  it("type-checks under TypeScript's node16 and bundler resolution (node20: the app's build above)", async function () {
    this.timeout(3 * 60_000);
    // node16 checks the packages' declarations too (skipLibCheck false): they must hold under it.
    await succeed(process.execPath, [tsc(), "-p", "tsconfig.node16.json"], app);
    await succeed(process.execPath, [tsc(), "-p", "tsconfig.bundler.json", "--skipLibCheck"], app);
  });

  it("loads every entry point from CommonJS and ES modules, one instance of each class", async function () {
    const output = await succeed(process.execPath, ["dist/require.cjs"], app);
    expect(lastJson(output)).to.include({ ok: true });
  });

  it("buys and sells on startDevnet from the installed @surety/devnet: x402 v2 and the v1 paywall", async function () {
    this.timeout(4 * 60_000);
    running = run(process.execPath, ["dist/app.js"], app, childEnv({ CONSUMER_DEVNET_DIR: devnetDir }));
    const { code, output } = await running.done;
    expect(code, output).to.equal(0);
    const results = lastJson(output);
    expect(results.ok).to.equal(true);
    expect(results.paid).to.deep.include({ status: 200 });
    expect(results.replay).to.deep.equal({ status: 402, errorReason: "payment_already_used" });
    // The seller restarted on its ledger file: the replay is refused by the ledger, the resource not
    // served and the facilitator not asked (nothing settled, nothing locked twice); a new payment is.
    expect(results.replayAfterRestart).to.deep.equal({
      status: 402,
      errorReason: "payment_already_used",
      served: false,
      settles: 0,
    });
    expect(results.paidAfterRestart).to.deep.equal({ status: 200, settles: 1 });
    expect(results.refusal).to.deep.equal({ status: 402, errorReason: "insufficient_collateral" });
    expect(results.v1).to.deep.include({ status: 200 });
    // startDevnet's stop() left nothing running.
    expect(existsSync(path.join(devnetDir, "state", "devnet.json"))).to.equal(false);
  });
});
