/**
 * No silent slow path (issue 28): Core run as an operator runs it (`operator/main.ts` in a child process) on
 * a machine where native/blst-minsig is missing (test/support/without-bls-addon.ts makes resolving it fail,
 * as a `node_modules` copied rather than installed does). It refuses to start, naming the fix, unless
 * SURETY_ALLOW_SLOW_BLS allows the pure-JavaScript signer; then its start-up line, health and metrics name
 * that signer, and its certificates verify. The in-process Core of the other tests names `blst`.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { ethers } from "hardhat";
import { blsBackend } from "../../sdk/bls";
import { parseCertificate, verifyCertificateSignature } from "../../sdk/certificate";
import { checkBlsBackend, StartupError } from "../../operator/startup";
import {
  coreOnTestChain,
  killCore,
  type CoreRun,
  START_TIMEOUT_MS,
  startCore,
  stopCore,
  until,
} from "./core-process";
import { facilitator, payer, signedBody, v1Claims } from "./guarantee-fixtures";
import { request, signIn, startTestCore, TEST_BLS_PUBLIC_KEY, type TestCore } from "./helpers";

const WITHOUT_ADDON = ["-r", "ts-node/register/transpile-only", "-r", "./test/support/without-bls-addon.ts"];
/** The hook acts only with this set (the file is also loaded, inert, by `hardhat test` itself). */
const WITHOUT_ADDON_ENV = { SURETY_TEST_WITHOUT_BLS_ADDON: "1" };

describe("Core's BLS signer: no silent slow path", function () {
  this.timeout(3 * START_TIMEOUT_MS);

  describe("the start-up check", function () {
    it("passes on blst, refuses noble unless allowSlowBls, naming the fix", function () {
      expect(() => checkBlsBackend({ allowSlowBls: false }, "blst")).not.to.throw();
      expect(() => checkBlsBackend({ allowSlowBls: true }, "noble")).not.to.throw();
      expect(() => checkBlsBackend({ allowSlowBls: false }, "noble"))
        .to.throw(StartupError)
        .with.property("message")
        .that.matches(/npm rebuild/)
        .and.matches(/npm run postinstall/)
        .and.matches(/SURETY_ALLOW_SLOW_BLS=true/);
    });
  });

  describe("an in-process Core with the addon built", function () {
    let core: TestCore | undefined;
    after(async () => core?.stop());

    it("names blst in health and metrics", async function () {
      expect(blsBackend()).to.equal("blst");
      core = await startTestCore();
      const health = await request(core.core.url, "GET", "/core/health");
      expect(health.body).to.have.property("bls_signer", "blst");
      const metrics = await (await fetch(`${core.core.url}/metrics`)).text();
      expect(metrics).to.match(/^surety_bls_signer_info\{backend="blst"\} 1$/m);
      expect(metrics).not.to.match(/backend="noble"/);
    });
  });

  describe("Core as a process without native/blst-minsig", function () {
    let run: CoreRun | undefined;
    let chain: Awaited<ReturnType<typeof coreOnTestChain>> | undefined;
    afterEach(async () => {
      await killCore(run);
      await chain?.close();
      run = chain = undefined;
    });

    it("refuses to start, naming npm rebuild and SURETY_ALLOW_SLOW_BLS", async function () {
      chain = await coreOnTestChain();
      run = startCore([...WITHOUT_ADDON, "operator/main.ts"], { ...chain.env, ...WITHOUT_ADDON_ENV });
      const code = await Promise.race([
        run.exited,
        new Promise<"timeout">((done) => setTimeout(() => done("timeout"), START_TIMEOUT_MS)),
      ]);
      expect(code, run.output()).to.equal(1);
      expect(run.output()).to.match(
        /Core refused to start: the native BLS signer \(native\/blst-minsig\) is not built or does not load/,
      );
      expect(run.output()).to.match(/`npm rebuild` \(or `npm run postinstall`\)/);
      expect(run.output()).to.match(/SURETY_ALLOW_SLOW_BLS=true/);
      // It refused before opening anything: no listening line.
      expect(run.lines().some((line) => line.msg === "Core listening")).to.equal(false);
    });

    it("starts with SURETY_ALLOW_SLOW_BLS=true and says noble in its log, health and metrics", async function () {
      chain = await coreOnTestChain();
      const { url, contracts } = chain;
      run = startCore([...WITHOUT_ADDON, "operator/main.ts"], {
        ...chain.env,
        ...WITHOUT_ADDON_ENV,
        SURETY_ALLOW_SLOW_BLS: "true",
      });
      const core = run;
      const listening = await until("listening", core, async () =>
        core.lines().find((line) => line.msg === "Core listening"),
      );
      expect(listening).to.include({ bls: "noble" });
      expect(core.lines().find((line) => line.level === 40 && line.bls === "noble")?.msg).to.match(
        /pure-JavaScript BLS fallback/,
      );
      const health = await until("healthy", core, async () => {
        const response = await request(url, "GET", "/core/health");
        return response.status === 200 ? response : undefined;
      });
      expect(health.body).to.have.property("bls_signer", "noble");
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).to.match(/^surety_bls_signer_info\{backend="noble"\} 1$/m);

      // The fallback signs the same certificates: one issued here verifies against the Vault's key.
      const vault = contracts.surety.vault.connect(new Wallet(payer.privateKey, ethers.provider));
      await (await vault.deposit({ value: 10_000n })).wait();
      const { access_token: token } = await signIn(url, facilitator);
      const auth = { authorization: `Bearer ${token}` };
      await until("deposit indexed", core, async () => {
        const response = await request(url, "GET", `/core/users/${payer.address}/balances`, {
          headers: auth,
        });
        const balances = (response.body as { balances: { deposited: string }[] }).balances;
        return balances.some((b) => b.deposited !== "0") ? true : undefined;
      });
      const json = await signedBody(
        v1Claims({ reqId: 1n, amount: 1_000n, timestamp: Math.floor(Date.now() / 1000) }),
      );
      const issued = await request(url, "POST", "/core/guarantees", { json, headers: auth });
      expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
      expect(verifyCertificateSignature(TEST_BLS_PUBLIC_KEY, parseCertificate(issued.body))).to.equal(true);

      expect(await stopCore(core)).to.equal(0);
    });
  });
});
