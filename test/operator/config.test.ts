import { expect } from "chai";
import { getAddress } from "ethers";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  collateralFactorBps,
  ConfigError,
  configFromObject,
  envNameOf,
  loadConfig,
  unknownEnvSettings,
} from "../../operator/config";
import { tempDir } from "./helpers";

const SECRETS = {
  SURETY_JWT_SECRET: "j".repeat(32),
  SURETY_BLS_SECRET: "0x" + "01".repeat(32),
};
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("operator config", () => {
  it("has the documented defaults", () => {
    const config = loadConfig({ ...SECRETS });
    expect(config).to.deep.include({
      host: "127.0.0.1",
      port: 8080,
      dbFile: join(".data", "operator.sqlite"),
      rpcUrl: "http://127.0.0.1:8545",
      chainId: 31337,
      deploymentFile: join("deployments", "localhost.json"),
      operatorPrivateKey: null,
      siweDomain: "127.0.0.1:8080",
      siweUri: "http://127.0.0.1:8080",
      nonceLifetimeSeconds: 300,
      accessTokenLifetimeSeconds: 900,
      refreshTokenLifetimeSeconds: 2_592_000,
      timestampWindowPastSeconds: 600,
      timestampWindowFutureSeconds: 30,
      eip712Name: "Surety",
      eip712Version: "1",
      defaultCollateralFactorBps: 10_000,
    });
    expect(config.facilitators).to.deep.equal([]);
    expect(config.databaseUrl).to.equal(null);
  });

  it("holds the health warning thresholds to their documented defaults and ranges (docs/monitoring.md)", () => {
    expect(loadConfig({ ...SECRETS })).to.deep.include({
      healthWebhookBacklogSeconds: 300,
      healthCutoffLatenessSeconds: 10,
      healthCommitSlackSeconds: null, // half the Vault's commitDelay
      healthCoverSlackSeconds: null, // half the Vault's defaultWindow
      healthBondMarginBps: 2_000,
      healthIndexerLagBlocks: null, // half of SURETY_INDEXER_MAX_LAG_BLOCKS
      healthIndexerStaleSeconds: null, // half of SURETY_INDEXER_MAX_STALE_SECONDS
    });
    const set = loadConfig({
      ...SECRETS,
      SURETY_HEALTH_WEBHOOK_BACKLOG_SECONDS: "60",
      SURETY_HEALTH_COMMIT_SLACK_SECONDS: "0",
      SURETY_HEALTH_INDEXER_LAG_BLOCKS: "8",
    });
    expect(set).to.deep.include({
      healthWebhookBacklogSeconds: 60,
      healthCommitSlackSeconds: 0,
      healthIndexerLagBlocks: 8,
    });
    const problems = problemsOf(() =>
      loadConfig({
        ...SECRETS,
        SURETY_HEALTH_WEBHOOK_BACKLOG_SECONDS: "0",
        SURETY_HEALTH_BOND_MARGIN_BPS: "x",
      }),
    );
    expect(problems.join("\n")).to.include("SURETY_HEALTH_WEBHOOK_BACKLOG_SECONDS");
    expect(problems.join("\n")).to.include("SURETY_HEALTH_BOND_MARGIN_BPS");
  });

  it("SURETY_DATABASE_URL selects PostgreSQL: a postgres:// URL, nothing else", () => {
    const url = "postgres://core:secret@db.internal:5432/surety";
    expect(loadConfig({ ...SECRETS, SURETY_DATABASE_URL: url }).databaseUrl).to.equal(url);
    const problems = problemsOf(() => loadConfig({ ...SECRETS, SURETY_DATABASE_URL: "mysql://db/surety" }));
    expect(problems.join("\n")).to.match(/SURETY_DATABASE_URL: /);
  });

  it("SURETY_LEADER_LEASE_MS and SURETY_REPLICA_ID: defaults, bounds, names", () => {
    const defaults = loadConfig({ ...SECRETS });
    expect([defaults.leaderLeaseMs, defaults.replicaId]).to.deep.equal([10_000, null]);
    const set = loadConfig({ ...SECRETS, SURETY_LEADER_LEASE_MS: "3000", SURETY_REPLICA_ID: "core-eu.1" });
    expect([set.leaderLeaseMs, set.replicaId]).to.deep.equal([3_000, "core-eu.1"]);
    const problems = problemsOf(() =>
      loadConfig({ ...SECRETS, SURETY_LEADER_LEASE_MS: "100", SURETY_REPLICA_ID: "core 1/x" }),
    ).join("\n");
    expect(problems).to.match(/SURETY_LEADER_LEASE_MS: /);
    expect(problems).to.match(/SURETY_REPLICA_ID: must be 1-64 characters/);
  });

  it("reads SURETY_* variables, normalising lists and maps", () => {
    const config = loadConfig({
      ...SECRETS,
      SURETY_PORT: "9000",
      SURETY_NETWORK: "sepolia",
      SURETY_FACILITATORS: `${TOKEN.toLowerCase()}, ${TOKEN}`,
      SURETY_COLLATERAL_FACTORS_BPS: `${TOKEN.toLowerCase()}:8000`,
    });
    expect(config.port).to.equal(9000);
    expect(config.deploymentFile).to.equal(join("deployments", "sepolia.json"));
    expect(config.facilitators).to.deep.equal([TOKEN]);
    expect(collateralFactorBps(config, TOKEN)).to.equal(8000);
    expect(collateralFactorBps(config, "0x" + "11".repeat(20))).to.equal(10_000);
  });

  it("names each bad variable and what is wrong", () => {
    const problems = problemsOf(() =>
      loadConfig({ SURETY_PORT: "http", SURETY_JWT_SECRET: "short", SURETY_FACILITATORS: "0x12" }),
    );
    expect(problems.join("\n")).to.match(/SURETY_PORT: must be an integer from 0 to 65535/);
    expect(problems.join("\n")).to.match(/SURETY_JWT_SECRET: must be at least 32 bytes, got 5/);
    expect(problems.join("\n")).to.match(/SURETY_BLS_SECRET: is required/);
    expect(problems.join("\n")).to.match(
      /SURETY_FACILITATORS: entry 0: must be a 0x-prefixed 20-byte hex address/,
    );
  });

  it("holds the webhook retry settings to their documented ranges (docs/webhooks.md)", () => {
    const bounds: [variable: string, min: number, max: number][] = [
      ["SURETY_WEBHOOK_MAX_ATTEMPTS", 1, 100],
      ["SURETY_WEBHOOK_TIMEOUT_MS", 100, 120_000],
      ["SURETY_WEBHOOK_BACKOFF_BASE_SECONDS", 1, 86_400],
      ["SURETY_WEBHOOK_BACKOFF_MAX_SECONDS", 1, 604_800],
    ];
    for (const [variable, min, max] of bounds) {
      expect(() => loadConfig({ ...SECRETS, [variable]: String(min) }), variable).to.not.throw();
      expect(() => loadConfig({ ...SECRETS, [variable]: String(max) }), variable).to.not.throw();
      for (const bad of [min - 1, max + 1]) {
        expect(problemsOf(() => loadConfig({ ...SECRETS, [variable]: String(bad) })).join("\n")).to.include(
          `${variable}: must be an integer from ${min} to ${max}`,
        );
      }
    }
  });

  it("reads a JSON file, env overriding it, and names file keys in errors", () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, "core.json");
      writeFileSync(
        file,
        JSON.stringify({
          port: 7000,
          chainId: 5,
          jwtSecret: "f".repeat(40),
          blsSecret: SECRETS.SURETY_BLS_SECRET,
        }),
      );
      const config = loadConfig({ SURETY_CONFIG_FILE: file, SURETY_CHAIN_ID: "10" });
      expect(config.port).to.equal(7000);
      expect(config.chainId).to.equal(10);

      writeFileSync(file, JSON.stringify({ chainId: -1, colour: "blue", ...{ jwtSecret: "f".repeat(40) } }));
      const problems = problemsOf(() =>
        loadConfig({ SURETY_CONFIG_FILE: file, ...SECRETS, SURETY_JWT_SECRET: undefined }),
      );
      expect(problems).to.include("colour: unknown setting");
      expect(problems.some((p) => p.startsWith(`${file}: chainId: must be an integer`))).to.equal(true);
    } finally {
      dir.remove();
    }
  });

  it("parses operator bond floors (address:base units, or a JSON object) and names bad entries", () => {
    const base = { jwtSecret: "j".repeat(32), blsSecret: "0x" + "01".repeat(32) };
    const token = "0x" + "ab".repeat(20);
    const eth = "0x" + "00".repeat(20);
    const floors = configFromObject({
      ...base,
      bondFloors: `${eth}:10000000000000000000,${token}:5`,
    }).bondFloors;
    expect(floors).to.deep.equal({ [eth]: 10n ** 19n, [getAddress(token)]: 5n });
    expect(configFromObject({ ...base, bondFloors: { [token]: "7" } }).bondFloors).to.deep.equal({
      [getAddress(token)]: 7n,
    });
    expect(configFromObject(base).bondFloors).to.deep.equal({});
    expect(problemsOf(() => configFromObject({ ...base, bondFloors: `${token}:-1` }))).to.deep.equal([
      `bondFloors: ${getAddress(token)}: must be a decimal amount in base units`,
    ]);
    expect(problemsOf(() => configFromObject({ ...base, bondFloors: "nope:1" }))).to.deep.equal([
      'bondFloors: "nope" is not an address',
    ]);
  });

  it("validates secrets and SIWE fields", () => {
    const base = { jwtSecret: "j".repeat(32), blsSecret: "0x" + "01".repeat(32) };
    expect(problemsOf(() => configFromObject({ ...base, blsSecret: "0x" + "01".repeat(31) }))).to.deep.equal([
      "blsSecret: must be at least 32 bytes, got 31",
    ]);
    expect(
      problemsOf(() => configFromObject({ ...base, operatorPrivateKey: "0x" + "00".repeat(32) })),
    ).to.deep.equal(["operatorPrivateKey: is not a valid secp256k1 private key"]);
    expect(problemsOf(() => configFromObject({ ...base, siweStatement: "two\nlines" }))[0]).to.match(
      /single line/,
    );
    expect(problemsOf(() => configFromObject({ ...base, siweDomain: "https://x.test" }))[0]).to.match(
      /authority/,
    );
    expect(problemsOf(() => configFromObject({ ...base, defaultCollateralFactorBps: 10_001 }))[0]).to.match(
      /from 0 to 10000/,
    );
  });

  it("reads the operator transaction settings and refuses a fee bump nodes would refuse", () => {
    const defaults = loadConfig({ ...SECRETS });
    expect(defaults).to.deep.include({
      txReplaceAfterBlocks: 3,
      txFeeBumpBps: 1_250,
      txMaxFeePerGasGwei: null,
    });
    const set = loadConfig({
      ...SECRETS,
      SURETY_TX_REPLACE_AFTER_BLOCKS: "5",
      SURETY_TX_FEE_BUMP_BPS: "2000",
      SURETY_TX_MAX_FEE_PER_GAS_GWEI: "300",
    });
    expect(set).to.deep.include({ txReplaceAfterBlocks: 5, txFeeBumpBps: 2_000, txMaxFeePerGasGwei: 300 });
    const problems = problemsOf(() =>
      loadConfig({
        ...SECRETS,
        SURETY_TX_REPLACE_AFTER_BLOCKS: "0",
        SURETY_TX_FEE_BUMP_BPS: "999",
        SURETY_TX_MAX_FEE_PER_GAS_GWEI: "0.5",
      }),
    );
    expect(problems).to.deep.equal([
      'SURETY_TX_REPLACE_AFTER_BLOCKS: must be an integer from 1 to 10000, got "0"',
      'SURETY_TX_FEE_BUMP_BPS: must be an integer from 1000 to 100000, got "999"',
      'SURETY_TX_MAX_FEE_PER_GAS_GWEI: must be an integer from 1 to 10000000, got "0.5"',
    ]);
  });

  it("maps field names to env names and reports unknown SURETY_* variables", () => {
    expect(envNameOf("eip712Name")).to.equal("SURETY_EIP712_NAME");
    expect(envNameOf("collateralFactorsBps")).to.equal("SURETY_COLLATERAL_FACTORS_BPS");
    expect(unknownEnvSettings({ SURETY_PROT: "1", SURETY_PORT: "1", HOME: "/" })).to.deep.equal([
      "SURETY_PROT",
    ]);
  });
});
