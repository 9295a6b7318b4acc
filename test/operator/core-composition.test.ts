/**
 * Core's composition root (operator/app/): the services are wired without HTTP, and the
 * background-only process (`startCoreBackground`, the cluster primary of operator/main.ts) builds no
 * Express app; the HTTP server mounts its routes on the same composition. Express apps are counted
 * where every one starts (`express.application.init`, called by `express()`), and the background
 * side's module graph is loaded in a fresh process to show it does not even load Express.
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { Writable } from "node:stream";
import express from "express";
import { ethers } from "hardhat";
import pino from "pino";
import { startCoreBackground } from "../../operator/app";
import { startCoreServer } from "../../operator/server";
import { deployTestContracts, tempDir, testConfig, testCoreDeps } from "./helpers";

/** Counts the Express apps built while `run` runs (express() calls `app.init()` on each new app). */
async function expressAppsBuilt(run: () => Promise<void>): Promise<number> {
  const proto = express.application as unknown as { init(this: unknown): void };
  const init = proto.init;
  let built = 0;
  proto.init = function (this: unknown) {
    built += 1;
    init.call(this);
  };
  try {
    await run();
  } finally {
    proto.init = init;
  }
  return built;
}

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

describe("Core's composition root (operator/app/)", function () {
  it("the background-only process builds no Express app and runs the background work", async function () {
    const contracts = await deployTestContracts();
    const dir = tempDir();
    try {
      const { logger, lines } = capturingLogger();
      const config = testConfig(dir.path);
      let context: object | undefined;
      const built = await expressAppsBuilt(async () => {
        const background = await startCoreBackground(config, {
          ...testCoreDeps(contracts.deployment),
          chainProvider: ethers.provider,
          logger,
        });
        context = background.context;
        expect(background).to.not.have.property("app");
        await background.close();
      });
      expect(built).to.equal(0);
      // The same services the HTTP server is handed (issuer, lifecycle, health...), built all the same.
      expect(context).to.include.keys("issuer", "lifecycle", "health", "metrics", "leadership");
      expect(lines.find((line) => line.msg === "background work started")).to.include({ role: "background" });
      expect(lines.map((line) => line.msg)).to.include("Core background work stopped");
    } finally {
      dir.remove();
    }
  });

  it("the HTTP server mounts its routes on the composition: one Express app", async function () {
    const contracts = await deployTestContracts();
    const dir = tempDir();
    try {
      const built = await expressAppsBuilt(async () => {
        const core = await startCoreServer(testConfig(dir.path, { logLevel: "silent" }), {
          ...testCoreDeps(contracts.deployment),
        });
        await core.close();
      });
      expect(built).to.equal(1);
    } finally {
      dir.remove();
    }
  });

  it("the background side's modules load neither Express nor anything of the HTTP layer", function () {
    // A fresh process: this one has loaded Express already (the tests above, the other test files).
    const script = [
      'require("./operator/app");',
      "const loaded = Object.keys(require.cache);",
      "process.stdout.write(JSON.stringify(loaded));",
    ].join("\n");
    const loaded = JSON.parse(
      execFileSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", script], {
        encoding: "utf8",
      }),
    ) as string[];
    const http = loaded.filter((file) =>
      /[\\/]node_modules[\\/](express|express-validator)[\\/]|[\\/]operator[\\/](api[\\/]|server\.ts)|express-server/.test(
        file,
      ),
    );
    expect(http).to.deep.equal([]);
    // Nor the API's schemas (zod, the OpenAPI components): it reads their vocabularies (sdk/api-vocabulary.ts).
    const schemas = loaded.filter((file) =>
      /[\\/]node_modules[\\/]zod[\\/]|[\\/]sdk[\\/]api-(?!vocabulary)/.test(file),
    );
    expect(schemas).to.deep.equal([]);
    // What it did load: the composition and the background tasks (the check sees the graph).
    expect(loaded.some((file) => file.endsWith("operator/app/open.ts"))).to.equal(true);
    expect(loaded.some((file) => file.endsWith("operator/background.ts"))).to.equal(true);
  });
});
