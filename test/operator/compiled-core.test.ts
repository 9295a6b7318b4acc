/**
 * Core compiled to JavaScript (`npm run operator:build`, then `npm run operator:start` =
 * `node dist/operator/main.js`; docs/scale-out.md "Running Core compiled"), as an operator would run it to keep the TypeScript
 * compiler out of the process (≈ 100 MB less RSS, docs/benchmarks.md): the build succeeds, the compiled
 * Core finds both native addons (BLS signing, keccak tree) from `dist/`, serves health and issues a
 * guarantee with a certificate, and stops on SIGTERM.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { ethers } from "hardhat";
import {
  coreOnTestChain,
  killCore,
  type CoreRun,
  ROOT,
  START_TIMEOUT_MS,
  startCore,
  stopCore,
  until,
} from "./core-process";
import { facilitator, payer, signedBody, v1Claims } from "./guarantee-fixtures";
import { request, signIn } from "./helpers";

describe("Core compiled to JavaScript (npm run operator:build / operator:start)", function () {
  this.timeout(2 * START_TIMEOUT_MS);
  let run: CoreRun | undefined;
  let chain: Awaited<ReturnType<typeof coreOnTestChain>> | undefined;

  after(async () => {
    await killCore(run);
    await chain?.close();
  });

  it("builds, finds its native addons from dist/, issues a certificate, stops on SIGTERM", async function () {
    // The build step of operator:build after the contracts and the console (which the test run has).
    const build = spawnSync(
      process.execPath,
      [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"],
      {
        cwd: ROOT,
        encoding: "utf8",
      },
    );
    expect(build.status, build.stdout + build.stderr).to.equal(0);
    expect(existsSync(join(ROOT, "dist", "operator", "main.js"))).to.equal(true);

    chain = await coreOnTestChain();
    const { contracts, url } = chain;
    run = startCore(["dist/operator/main.js"], chain.env);
    const core = run;
    const listening = await until("listening", core, async () =>
      core.lines().find((l) => l.msg === "Core listening"),
    );
    expect(listening).to.include({ bls: "blst", keccak: "native" });
    await until("healthy", core, async () =>
      (await fetch(`${url}/core/health`)).status === 200 ? true : undefined,
    );

    const vault = contracts.surety.vault.connect(new Wallet(payer.privateKey, ethers.provider));
    await (await vault.deposit({ value: 10_000n })).wait();
    const { access_token: token } = await signIn(url, facilitator);
    const auth = { authorization: `Bearer ${token}` };
    await until("deposit indexed", core, async () => {
      const response = await request(url, "GET", `/core/users/${payer.address}/balances`, { headers: auth });
      const balances = (response.body as { balances: { deposited: string }[] }).balances;
      return balances.some((b) => b.deposited !== "0") ? true : undefined;
    });
    const json = await signedBody(
      v1Claims({ reqId: 1n, amount: 1_000n, timestamp: Math.floor(Date.now() / 1000) }),
    );
    const issued = await request(url, "POST", "/core/guarantees", { json, headers: auth });
    expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
    expect(issued.body)
      .to.have.property("signature")
      .that.matches(/^0x[0-9a-f]{96}$/);

    expect(await stopCore(core)).to.equal(0);
  });
});
