/**
 * The operator console (docs/console.md) in a real browser: Debian's Chromium (/usr/bin/chromium), else
 * the one the npm package @sparticuz/chromium ships (test/support/chromium.ts), driven by playwright-core, against the console Core serves at /console/ on the real protocol stack
 * (test/e2e/protocol-fixtures.ts: Hardhat chain, Core over a SQLite file, facilitator). The console is
 * built first with Vite, as `npm run devnet` does. The Health view must show the chain head Core reads;
 * a cycle Core commits must appear in the Cycles view with its root, totals in token units and its
 * debtor; every request the page makes goes to Core (no CDN). Without a usable Chromium the test fails:
 * the browser is part of the test's contract.
 *
 * `SURETY_CONSOLE_SCREENSHOTS=1` also writes the screenshots docs/console.md shows
 * (`npm run console:screenshots`).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import express from "express";
import { getBytes, Wallet } from "ethers";
import { ethers } from "hardhat";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { consoleRouter } from "../../operator/api/console-routes";
import { chainFixture, type ChainFixture } from "../operator/indexer-fixtures";
import { cycleOf, type ProtocolStack, startProtocolStack } from "./protocol-fixtures";
import { type ChromiumLaunch, resolveChromium } from "../support/chromium";

/**
 * The default deployment under a fixture of this file's own: loadFixture snapshots per function, and the
 * chain time of a snapshot restored later trails the wall clock by the time since it was taken. Sharing
 * `chainFixture`'s snapshot would make this file (first of test/e2e) the one that takes it, long before
 * protocol-reserve.test.ts, whose V2 deadline then passes before its reserve is registered.
 */
async function consoleDeployment(): Promise<ChainFixture> {
  return chainFixture();
}

const ROOT = path.resolve(__dirname, "../..");
/** The page polls every 2 s: a change must show within two polls and a slow render. */
const SHOWS_WITHIN_MS = 10_000;
const SCREENSHOT_DIR = path.join(ROOT, "docs", "images");

function buildConsole(): void {
  execFileSync(process.execPath, [path.join(ROOT, "node_modules/vite/bin/vite.js"), "build", "console"], {
    cwd: ROOT,
    stdio: "pipe",
  });
}

async function textOf(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent()) ?? "";
}

interface PageGlobals {
  document: { querySelector(selector: string): { textContent: string | null } | null };
}

/** Waits until `selector`'s text is `expected` (the page re-renders on every poll). */
async function waitForText(page: Page, selector: string, expected: string): Promise<void> {
  await page.waitForFunction(
    // Runs in the page; the test's tsconfig has no DOM types, hence the minimal shape of `document`.
    ([sel, text]) => (globalThis as unknown as PageGlobals).document.querySelector(sel)?.textContent === text,
    [selector, expected] as const,
    { timeout: SHOWS_WITHIN_MS },
  );
}

/** Waits until `selector`'s text contains `expected`. */
async function waitForTextIncluding(page: Page, selector: string, expected: string): Promise<void> {
  await page.waitForFunction(
    ([sel, text]) =>
      ((globalThis as unknown as PageGlobals).document.querySelector(sel)?.textContent ?? "").includes(text),
    [selector, expected] as const,
    { timeout: SHOWS_WITHIN_MS },
  );
}

/** Goes to a view of the page already open (same document: the session in memory stays). */
async function go(page: Page, hash: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
}

/**
 * A browser context with an EIP-1193 wallet backed by `wallet` (a dev key): `window.ethereum` answers
 * `eth_requestAccounts` with the address in lower case (as wallets often do) and `personal_sign` through a
 * function exposed to the page, which signs in Node with ethers.
 */
async function walletContext(
  browser: Browser,
  wallet: Wallet,
  options: { timezoneId?: string; viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    // A zone other than UTC by default, so local times show beside UTC (the page omits them in UTC).
    timezoneId: options.timezoneId ?? "Europe/Paris",
    acceptDownloads: true,
  });
  await context.exposeFunction("__suretyDevSign", (hexMessage: string) =>
    wallet.signMessage(getBytes(hexMessage)),
  );
  await context.addInitScript({
    content: `window.ethereum = {
      async request({ method, params }) {
        if (method === "eth_requestAccounts" || method === "eth_accounts") return [${JSON.stringify(wallet.address.toLowerCase())}];
        if (method === "eth_chainId") return "0x7a69";
        if (method === "personal_sign") return window.__suretyDevSign(params[0]);
        throw Object.assign(new Error("unsupported method " + method), { code: 4200 });
      },
    };`,
  });
  return context;
}

/** Problems a page reports: uncaught errors, console errors, answers ≥ 400 other than `expected`. */
function watchProblems(page: Page, problems: string[], expected: (status: number, path: string) => boolean) {
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  page.on("response", (answer) => {
    const status = answer.status();
    if (status >= 400 && !expected(status, new URL(answer.url()).pathname)) {
      problems.push(`${status} ${answer.url()}`);
    }
  });
}

/** An ISO instant as the page prints it: `2025-06-15 15:06:40 UTC`. */
function utcText(iso: string): string {
  return iso.replace("T", " ").replace(/(\.\d+)?Z$/, " UTC");
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (!process.env.SURETY_CONSOLE_SCREENSHOTS) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });
}

/** In `SURETY_ADMIN_WALLETS` of the stack below (no funds needed: it only signs in). */
const ADMIN = new Wallet("0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a");

describe("operator console in headless Chromium on a real stack", function () {
  this.timeout(120_000);
  let s: ProtocolStack | undefined;
  let browser: Browser | undefined;
  let chromiumLaunch: ChromiumLaunch;
  const launch = () =>
    chromium.launch({
      executablePath: chromiumLaunch.executablePath,
      headless: true,
      args: chromiumLaunch.args,
      env: chromiumLaunch.env,
    });

  before(async function () {
    chromiumLaunch = await resolveChromium();
    console.log(`      (browser: ${chromiumLaunch.source})`);
    buildConsole();
  });

  afterEach(async () => {
    await browser?.close();
    browser = undefined;
    await s?.close();
    s = undefined;
  });

  it("shows the chain head, then a committed cycle with its root, totals in tUSD and its open debtor", async function () {
    s = await startProtocolStack({ fixture: consoleDeployment });
    const { f, w } = s;
    const usd = f.usdAddress;
    await s.round(); // first indexer pass: Core knows the head and the chain time

    browser = await launch();
    const page = await browser.newPage({
      viewport: { width: 1280, height: 900 },
      timezoneId: "Europe/Paris",
    });
    const requests: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      // Failed loads are judged by their response below: a 404 of a cycle id probe is how the page finds the last.
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        problems.push(`console error: ${message.text()}`);
      }
    });
    page.on("response", (answer) => {
      const probe = answer.status() === 404 && /\/core\/cycles\/\d+$/.test(new URL(answer.url()).pathname);
      if (answer.status() >= 400 && !probe) problems.push(`${answer.status()} ${answer.url()}`);
    });

    const consoleUrl = `${s.core.url}/console/`;
    const response = await page.goto(consoleUrl);
    expect(response?.status()).to.equal(200);
    expect(response?.headers()["content-security-policy"]).to.include("default-src 'none'");

    // Health: the head the indexer read, which is the chain's block number (nothing mined since).
    const health = (await (await fetch(`${s.core.url}/core/health`)).json()) as {
      chain_sync: { head_block: number };
    };
    expect(health.chain_sync.head_block).to.equal(await ethers.provider.getBlockNumber());
    await waitForText(page, "[data-testid=chain-head]", String(health.chain_sync.head_block));
    expect(await textOf(page, "section.health h2")).to.equal("Health ok");
    expect(await textOf(page, "section.health")).to.include("Cycle length");
    await screenshot(page, "console-health-empty.png");

    // Cycles, none yet: the empty state says what to do.
    await page.click("nav a[data-view=cycles]");
    await page.waitForSelector("[data-state=empty]", { timeout: SHOWS_WITHIN_MS });
    expect(await textOf(page, "[data-state=empty]")).to.include("No cycle committed yet.");
    await screenshot(page, "console-cycles-empty.png");

    // alice deposits 10 tUSD and buys 1.5 tUSD from bob and 0.25 tUSD from carol; bob buys 0.5 tUSD from
    // alice. At the cutoff Core commits cycle 1: alice owes 1.25 tUSD net.
    await f.vault.connect(w.alice).depositToken(usd, 10_000_000n);
    await f.vault.connect(w.bob).depositToken(usd, 5_000_000n);
    await s.round();
    await s.settle("alice", "bob", 1_500_000n, usd);
    await s.settle("alice", "carol", 250_000n, usd);
    await s.settle("bob", "alice", 500_000n, usd);
    await s.advance(f.timings.cycleLength);
    expect((await s.round()).scheduler).to.include({ action: "committed", cycleId: 1, guarantees: 3 });
    const committed = await cycleOf(s, 1);

    await page.waitForSelector('[data-testid=cycle][data-cycle-id="1"]', { timeout: SHOWS_WITHIN_MS });
    const card = '[data-testid=cycle][data-cycle-id="1"]';
    expect(await textOf(page, `${card} [data-testid=cycle-root]`)).to.equal(committed.root);
    const totals = await textOf(page, `${card} [data-testid=cycle-totals]`);
    expect(totals).to.include("tUSD").and.include("1.25 tUSD"); // total debit = total credit = 1.25
    expect(await textOf(page, `${card} [data-testid=debtor-summary]`)).to.equal(
      "0 paid · 0 covered · 1 open",
    );
    expect(await textOf(page, card))
      .to.include(w.alice.address)
      .and.include("COMMITTED");
    // The debtor's proof downloads from Core's public proof endpoint.
    const proofHref = await page.locator(`${card} [data-testid=proof-link]`).first().getAttribute("href");
    expect(proofHref).to.equal(`/core/cycles/1/participants/${w.alice.address}/proof`);
    const proof = (await (await fetch(`${s.core.url}${proofHref}`)).json()) as { root: string };
    expect(proof.root).to.equal(committed.root);
    await screenshot(page, "console-cycles.png");

    // Back on Health, the latest cycle's deadlines are shown in chain time (UTC) and local time.
    await page.click("nav a[data-view=health]");
    await page.waitForSelector("[data-testid=latest-cycle]", { timeout: SHOWS_WITHIN_MS });
    const paymentDeadline = utcText(new Date(committed.payment_deadline as string).toISOString());
    expect(await textOf(page, "[data-testid=latest-cycle]"))
      .to.include(paymentDeadline)
      .and.include("local");
    await screenshot(page, "console-health.png");

    // Offline by construction: every request went to Core, and the page logged no error (a CSP refusal would).
    const origin = new URL(s.core.url).origin;
    expect(requests.filter((url) => new URL(url).origin !== origin)).to.deep.equal([]);
    expect(requests.some((url) => url.includes("/console/assets/"))).to.equal(true);
    expect(problems).to.deep.equal([]);

    // Core goes away: the page says so and what to do, keeps the last data on screen, and keeps trying.
    await s.core.close();
    await page.waitForSelector("[data-state=error]", { timeout: SHOWS_WITHIN_MS });
    expect(await textOf(page, "[data-state=error]"))
      .to.include("Core cannot be reached")
      .and.include("npm run devnet")
      .and.include("the last data read");
    expect(await textOf(page, "[data-testid=chain-head]")).to.match(/^\d+$/);
    await screenshot(page, "console-error.png");
  });

  it("a payer signs in with its wallet and follows its purchase to NETTED, certificate checked in the browser; a stranger sees nothing private; the admin sees all", async function () {
    s = await startProtocolStack({
      fixture: consoleDeployment,
      config: {
        adminWallets: ADMIN.address,
        // Nothing listens there and no dispatcher runs in these rounds: deliveries stay pending (backlog).
        webhooks: JSON.stringify([
          { id: "ledger", url: "http://127.0.0.1:9/hook", secret: "s".repeat(32), event_types: ["*"] },
        ]),
      },
    });
    const { f, w } = s;
    const usd = f.usdAddress;
    const url = s.core.url;
    await s.round();
    browser = await launch();
    const problems: string[] = [];
    const requests: string[] = [];

    // The payer's browser: before signing in, private views say to sign in. Its sign-in asks Core who it is
    // (GET /console/api/session, 200 for every wallet): no refused request, nothing in the browser's console.
    const payer = await (await walletContext(browser, w.alice)).newPage();
    watchProblems(payer, problems, () => false);
    payer.on("console", (message) => {
      if (message.type() === "error") problems.push(`payer console error: ${message.text()}`);
    });
    payer.on("request", (request) => requests.push(request.url()));
    await payer.goto(`${url}/console/#/guarantees`);
    await waitForTextIncluding(payer, "[data-state=empty]", "Sign in to see guarantees.");
    await payer.click("[data-testid=sign-in]");
    await waitForText(
      payer,
      "[data-testid=signed-in-as]",
      `${w.alice.address.slice(0, 6)}…${w.alice.address.slice(-4)}`,
    );
    await waitForTextIncluding(payer, "[data-state=empty]", "No guarantee matches.");

    // A deposit on chain shows in the payer's collateral once Core indexed it, in token units.
    await f.vault.connect(w.alice).depositToken(usd, 10_000_000n);
    await s.round();
    await go(payer, "#/collateral");
    await payer.waitForSelector("[data-testid=collateral-table]", { timeout: SHOWS_WITHIN_MS });
    expect(await textOf(payer, "[data-testid=collateral-table]"))
      .to.include("tUSD")
      .and.include("10");
    expect(await textOf(payer, "[data-testid=available]")).to.equal("10 tUSD");

    // A purchase through the facilitator: the guarantee appears in the payer's list by itself.
    const issued = await s.settle("alice", "bob", 1_500_000n, usd);
    const id = issued.id.toLowerCase();
    const row = `[data-testid=guarantee-row][data-guarantee-id="${id}"]`;
    await go(payer, "#/guarantees");
    await payer.waitForSelector(row, { timeout: SHOWS_WITHIN_MS });
    expect(await textOf(payer, `${row} [data-testid=guarantee-state]`)).to.equal("FINALIZED_PAYABLE");
    expect(await textOf(payer, row)).to.include("1.5 tUSD");

    // The cycle: at the cutoff (chain time moved, no sleep) Core commits it and the guarantee is NETTED.
    await s.advance(f.timings.cycleLength);
    expect((await s.round()).scheduler).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    const committed = await cycleOf(s, 1);
    await waitForText(payer, `${row} [data-testid=guarantee-state]`, "NETTED");
    await screenshot(payer, "console-guarantees.png");

    // Its page: the certificate's BLS signature checked in the browser against Core's key, and the timeline.
    await payer.click(`${row} a`);
    await payer.waitForSelector("[data-testid=certificate-check][data-result=pass]", {
      timeout: SHOWS_WITHIN_MS,
    });
    expect(await textOf(payer, "[data-testid=certificate-check]")).to.include("BLS signature valid");
    expect(await textOf(payer, "[data-testid=guarantee-id]")).to.equal(id);
    await payer.waitForSelector("[data-testid=timeline] li[data-kind=netted]", { timeout: SHOWS_WITHIN_MS });
    expect(
      await textOf(payer, "[data-testid=timeline] li[data-kind=netted] [data-testid=timeline-tx]"),
    ).to.equal(committed.commit_tx);
    expect(await textOf(payer, "[data-testid=timeline] li[data-kind=issued]")).to.include("local");
    await screenshot(payer, "console-guarantee.png");
    await go(payer, "#/collateral");
    await payer.waitForSelector("[data-testid=collateral-table]", { timeout: SHOWS_WITHIN_MS });
    await screenshot(payer, "console-collateral.png");

    // A stranger's wallet: signed in, it sees none of the payer's data, and is told why.
    const stranger = await (await walletContext(browser, w.dave)).newPage();
    const refused = (status: number, path: string) =>
      (status === 404 && path === `/core/guarantees/${id}`) ||
      (status === 404 && path === `/core/guarantees/${id}/timeline`) ||
      (status === 403 && path.startsWith("/core/guarantees")) ||
      (status === 403 && path.startsWith(`/core/users/${w.alice.address}`)) ||
      (status === 403 && path === "/core/users") ||
      (status === 403 && path.startsWith("/console/api/guarantees")) ||
      (status === 403 && path === `/console/api/users/${w.alice.address}/ledger`);
    watchProblems(stranger, problems, refused);
    await stranger.goto(`${url}/console/#/guarantee/${id}`);
    await stranger.click("[data-testid=sign-in]");
    await waitForTextIncluding(stranger, "[data-state=error]", "neither its payer nor its recipient");
    await go(stranger, `#/guarantees?payer=${w.alice.address}`);
    await waitForTextIncluding(stranger, "[data-state=error]", "only its own data");
    await go(stranger, `#/collateral?address=${w.alice.address}`);
    await waitForTextIncluding(stranger, "[data-state=error]", "only its own data");
    await go(stranger, "#/guarantees");
    await waitForTextIncluding(stranger, "[data-state=empty]", "No guarantee matches.");
    await go(stranger, "#/webhooks");
    await waitForTextIncluding(stranger, "[data-state=empty]", "admin wallets only");
    const seen = (await stranger.locator("body").textContent()) ?? "";
    expect(seen).not.to.include(id);
    expect(seen).not.to.include("1.5 tUSD");

    // The admin wallet: every guarantee, any payer's collateral, webhooks with their backlog, on Health too.
    const admin = await (await walletContext(browser, ADMIN)).newPage();
    watchProblems(admin, problems, () => false);
    await admin.goto(`${url}/console/#/webhooks`);
    await admin.click("[data-testid=sign-in]");
    await waitForText(
      admin,
      "[data-testid=signed-in-as]",
      `${ADMIN.address.slice(0, 6)}…${ADMIN.address.slice(-4)} (admin)`,
    );
    await admin.waitForSelector('[data-testid=webhook][data-webhook-id="ledger"]', {
      timeout: SHOWS_WITHIN_MS,
    });
    expect(await textOf(admin, "[data-testid=webhook-backlog]")).to.match(/^[1-9]\d* pending, 0 failed/);
    await screenshot(admin, "console-webhooks.png");
    await go(admin, "#/guarantees");
    await admin.waitForSelector(row, { timeout: SHOWS_WITHIN_MS });
    // Every payer's collateral (GET /core/users), then one payer's details through its link.
    await go(admin, "#/collateral");
    const aliceRow = `[data-testid=collateral-list] tr[data-user="${w.alice.address}"]`;
    await admin.waitForSelector(aliceRow, { timeout: SHOWS_WITHIN_MS });
    expect(await textOf(admin, aliceRow))
      .to.include("10 tUSD")
      .and.include("1.5 tUSD");
    await screenshot(admin, "console-collateral-list.png");
    await admin.click(`${aliceRow} a[data-testid=address-link]`);
    await admin.waitForSelector("[data-testid=collateral-table]", { timeout: SHOWS_WITHIN_MS });
    await go(admin, "#/health");
    await admin.waitForSelector("[data-testid=health-backlog]", { timeout: SHOWS_WITHIN_MS });
    await admin.waitForSelector("[data-testid=next-cutoff]", { timeout: SHOWS_WITHIN_MS });
    const schedule = (await (await fetch(`${url}/core/clearing/schedule`)).json()) as { next_cutoff: string };
    expect(await textOf(admin, "[data-testid=next-cutoff]")).to.include(utcText(schedule.next_cutoff));
    await screenshot(admin, "console-health-admin.png");

    // Sign-out: the private views ask to sign in again.
    await go(payer, "#/guarantees");
    await payer.click("[data-testid=sign-out]");
    await waitForTextIncluding(payer, "[data-state=empty]", "Sign in to see guarantees.");

    const origin = new URL(url).origin;
    expect(requests.filter((r) => new URL(r).origin !== origin)).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });

  it("an operator's tool: pages past 50 guarantees, searches, follows links, exports CSV, reads the ledger, retries a delivery, sees a warning, fits 390 px", async function () {
    s = await startProtocolStack({
      fixture: consoleDeployment,
      config: {
        adminWallets: ADMIN.address,
        explorerUrl: "https://explorer.test",
        // Nothing listens there and no dispatcher runs in these rounds: deliveries stay pending (backlog).
        webhooks: JSON.stringify([
          { id: "ledger", url: "http://127.0.0.1:9/hook", secret: "s".repeat(32), event_types: ["*"] },
        ]),
        healthWebhookBacklogSeconds: 60,
      },
    });
    const { f, w } = s;
    const usd = f.usdAddress;
    const url = s.core.url;
    await s.round();
    await f.vault.connect(w.alice).depositToken(usd, 10_000_000n);
    await s.round();
    const issued = await s.settle("alice", "bob", 1_500_000n, usd);
    const id = issued.id.toLowerCase();
    await s.advance(f.timings.cycleLength);
    expect((await s.round()).scheduler).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    const committed = await cycleOf(s, 1);
    // 60 more of alice's (to carol), straight into Core's store: enough for two pages; one remunerated.
    const store = s.core.context.store;
    const now = await s.syncClocks();
    for (let n = 1; n <= 60; n++) {
      await store.guarantees.insertGuarantee({
        guaranteeId: "0x" + (0xc0de0000 + n).toString(16).padStart(64, "0"),
        version: 1,
        user: w.alice.address,
        recipient: w.carol.address,
        reqId: BigInt(1_000_000 + n),
        amount: 1000n,
        asset: usd,
        timestamp: now,
        policy: null,
        scheme: "eip712",
        signature: "0x" + "ab".repeat(65),
        certificateClaims: "0x01",
        certificateSignature: "0x02",
        state: n === 60 ? "DEFAULT_REMUNERATED" : "FINALIZED_PAYABLE",
        createdAt: now - 60 + n,
      });
    }

    browser = await launch();
    const problems: string[] = [];
    // The admin in UTC: every time printed once.
    const admin = await (await walletContext(browser, ADMIN, { timezoneId: "UTC" })).newPage();
    watchProblems(admin, problems, (status, p) => status === 400 && p === "/console/api/guarantees");
    await admin.goto(`${url}/console/#/guarantees?payer=${w.alice.address}`);
    await admin.click("[data-testid=sign-in]");
    await waitForTextIncluding(admin, "[data-testid=signed-in-as]", "(admin)");

    // Paging: 61 in all, 50 a page, the total shown; Older reaches the last 11.
    await waitForText(admin, "[data-testid=guarantee-range]", "1–50 of 61 (page 1 of 2)");
    expect(await admin.locator("[data-testid=guarantee-row]").count()).to.equal(50);
    expect(await admin.locator(".time .local").count()).to.equal(0);
    expect(await textOf(admin, "[data-testid=guarantee-row] .time")).to.match(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
    );
    // DEFAULT_REMUNERATED (the newest) has a colour of its own; FINALIZED_PAYABLE's is amber.
    const [defaulted, payable] = (await admin.evaluate(`(() => {
      const of = (state) => [...document.querySelectorAll("[data-testid=guarantee-state]")]
        .find((b) => b.textContent === state);
      return [of("DEFAULT_REMUNERATED"), of("FINALIZED_PAYABLE")].map((b) => b && getComputedStyle(b).color);
    })()`)) as [string | null, string | null];
    expect(defaulted).to.be.a("string");
    expect(payable).to.be.a("string");
    expect(defaulted).to.not.equal(payable);
    await admin.locator("[data-testid=page-older]").first().click();
    await waitForText(admin, "[data-testid=guarantee-range]", "51–61 of 61 (page 2 of 2)");
    expect(await admin.locator("[data-testid=guarantee-row]").count()).to.equal(11);
    await admin.waitForSelector(`[data-testid=guarantee-row][data-guarantee-id="${id}"]`);
    await screenshot(admin, "console-guarantees-paging.png");

    // Search: by guarantee id, then by the commit's transaction hash; CSV export of the payer's 61.
    await go(admin, `#/guarantees?payer=${w.alice.address}`);
    await waitForTextIncluding(admin, "[data-testid=guarantee-range]", "of 61");
    await admin.fill("input[name=q]", id);
    await admin.click("[data-testid=guarantee-filters] button[type=submit]");
    await waitForText(admin, "[data-testid=guarantee-range]", "1–1 of 1 (page 1 of 1)");
    await admin.fill("input[name=q]", committed.commit_tx as string);
    await admin.click("[data-testid=guarantee-filters] button[type=submit]");
    await waitForText(admin, "[data-testid=guarantee-range]", "1–1 of 1 (page 1 of 1)");
    await admin.fill("input[name=q]", "");
    await admin.click("[data-testid=guarantee-filters] button[type=submit]");
    await waitForTextIncluding(admin, "[data-testid=guarantee-range]", "of 61");
    const [download] = await Promise.all([
      admin.waitForEvent("download"),
      admin.click("[data-testid=export-csv]"),
    ]);
    const csv = await new Promise<string>((resolve, reject) => {
      void download.createReadStream().then((stream) => {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        stream.on("error", reject);
      }, reject);
    });
    const lines = csv.trim().split("\r\n");
    expect(lines).to.have.length(62);
    expect(lines[0]).to.equal(
      '"guarantee_id","state","version","payer","recipient","asset","amount","req_id","cycle_id","created_at","updated_at"',
    );
    expect(csv).to.include(`"${id}","NETTED"`);
    await waitForTextIncluding(admin, "[data-testid=notice]", "Exported 61 guarantees");

    // A bad state in the address: the message names the parameter, not addresses.
    await go(admin, "#/guarantees?state=BOGUS");
    await waitForTextIncluding(admin, "[data-state=error]", "state: must be one of");
    expect(await textOf(admin, "[data-state=error]")).not.to.include("40 hex digits");

    // Links: guarantee → its cycle → its guarantees and its debtor's ledger; hashes → the explorer.
    await go(admin, `#/guarantee/${id}`);
    await admin.waitForSelector("[data-testid=guarantee-cycle] a");
    await admin.click("[data-testid=guarantee-cycle] a");
    await admin.waitForSelector('[data-view=cycle] [data-testid=cycle][data-cycle-id="1"]', {
      timeout: SHOWS_WITHIN_MS,
    });
    expect(
      await admin.locator("[data-view=cycle] [data-testid=explorer-tx]").first().getAttribute("href"),
    ).to.equal(`https://explorer.test/tx/${committed.commit_tx}`);
    await screenshot(admin, "console-cycle.png");
    await admin.click("[data-view=cycle] [data-testid=cycle-guarantees]");
    await admin.waitForSelector(`[data-testid=guarantee-row][data-guarantee-id="${id}"]`, {
      timeout: SHOWS_WITHIN_MS,
    });
    expect(await admin.locator("[data-testid=guarantee-row]").count()).to.equal(1);
    await go(admin, "#/cycle/1");
    await admin.waitForSelector("[data-view=cycle] [data-testid=debtor] a[data-testid=address-link]", {
      timeout: SHOWS_WITHIN_MS,
    });
    await admin.click("[data-view=cycle] [data-testid=debtor] a[data-testid=address-link]");
    await admin.waitForSelector("[data-testid=ledger]", { timeout: SHOWS_WITHIN_MS });
    const kinds = await admin
      .locator("[data-testid=ledger-entry]")
      .evaluateAll((rows) => rows.map((r) => (r as never as { dataset: { kind: string } }).dataset.kind));
    expect(kinds).to.include.members(["deposit", "net_debit", "lock"]);
    await screenshot(admin, "console-ledger.png");

    // Webhooks: a test event, a retry, one delivery's payload and attempts.
    await go(admin, "#/webhooks");
    await admin.waitForSelector('[data-testid=webhook][data-webhook-id="ledger"] [data-testid=send-test]', {
      timeout: SHOWS_WITHIN_MS,
    });
    await admin.click('[data-testid=webhook][data-webhook-id="ledger"] [data-testid=send-test]');
    await waitForTextIncluding(admin, "[data-testid=notice]", "queued for ledger");
    // Locators, not string predicates: the page's CSP forbids the eval a polled string would need.
    await admin
      .locator("[data-testid=delivery]", { hasText: "webhook.test" })
      .first()
      .waitFor({ timeout: SHOWS_WITHIN_MS });
    await admin.locator("[data-testid=delivery] [data-testid=retry]").first().click();
    await waitForTextIncluding(admin, "[data-testid=notice]", "queued again");
    await screenshot(admin, "console-webhooks.png");
    await admin.locator("[data-testid=delivery-link]").first().click();
    await admin.waitForSelector("[data-testid=delivery-payload]", { timeout: SHOWS_WITHIN_MS });
    expect(await textOf(admin, "[data-testid=delivery-payload]")).to.include('"api_version"');
    expect(await textOf(admin, "[data-testid=delivery-attempts]")).to.include("Attempts");
    // Each recorded attempt in a table, or a line saying none has finished yet.
    expect(await textOf(admin, "[data-view=delivery]")).to.match(/No attempt has finished yet|Outcome/);
    await screenshot(admin, "console-delivery.png");

    // A warning: the backlog is older than its threshold (60 s of Core's clock) → amber on Health.
    await s.advance(120);
    await go(admin, "#/health");
    await admin.waitForSelector(
      "[data-testid=health-warning][data-check=webhook_backlog][data-severity=amber]",
      {
        timeout: SHOWS_WITHIN_MS,
      },
    );
    expect(await textOf(admin, "section.health h2")).to.match(/^Health ok \d+ warnings?$/);
    expect(await admin.locator("[data-check=webhook_backlog] .badge.warn").count()).to.equal(1);
    await admin.waitForSelector("[data-testid=chart-cycle-size]", { timeout: SHOWS_WITHIN_MS });
    expect(await admin.locator("[data-testid=charts] svg").count()).to.equal(5);
    await screenshot(admin, "console-health-warning.png");

    // An unknown route says so instead of showing Health.
    await go(admin, "#/nowhere");
    await waitForTextIncluding(admin, "[data-view=not-found]", 'No page "#/nowhere"');
    expect(await admin.locator("section.health").count()).to.equal(0);

    // 390 px wide: nothing wider than the screen, the sign-in button on it.
    const phone = await (
      await walletContext(browser, w.alice, { viewport: { width: 390, height: 844 } })
    ).newPage();
    watchProblems(phone, problems, () => false);
    phone.on("console", (message) => {
      if (message.type() === "error") problems.push(`phone console error: ${message.text()}`);
    });
    await phone.goto(`${url}/console/`);
    await phone.waitForSelector("[data-testid=chain-head]", { timeout: SHOWS_WITHIN_MS });
    const widthOf = () => phone.evaluate("document.documentElement.scrollWidth") as Promise<number>;
    expect(await widthOf()).to.be.at.most(390);
    const button = await phone.locator("[data-testid=sign-in]").boundingBox();
    expect(button).to.not.equal(null);
    expect(button!.x + button!.width).to.be.at.most(390);
    await screenshot(phone, "console-mobile.png");
    await phone.click("[data-testid=sign-in]");
    await waitForTextIncluding(phone, "[data-testid=signed-in-as]", w.alice.address.slice(0, 6));
    for (const view of ["#/guarantees", "#/cycles", "#/collateral"]) {
      await go(phone, view);
      await phone.waitForSelector("main section", { timeout: SHOWS_WITHIN_MS });
      await phone
        .locator("[data-state=loading]")
        .first()
        .waitFor({ state: "detached", timeout: SHOWS_WITHIN_MS });
      expect(await widthOf(), view).to.be.at.most(390);
    }
    expect(problems).to.deep.equal([]);
  });

  it("says how to build the console when it is not built (503), and redirects /console to /console/", async function () {
    const dir = mkdtempSync(path.join(tmpdir(), "surety-console-"));
    const app = express().use(consoleRouter(dir));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const missing = await fetch(`${base}/console/`);
      expect(missing.status).to.equal(503);
      expect(await missing.text()).to.include("npm run console:build");

      writeFileSync(path.join(dir, "index.html"), "<!doctype html><title>console</title>");
      const redirect = await fetch(`${base}/console`, { redirect: "manual" });
      expect(redirect.status).to.equal(301);
      expect(redirect.headers.get("location")).to.equal("/console/");
      const served = await fetch(`${base}/console/`);
      expect(served.status).to.equal(200);
      expect(served.headers.get("cache-control")).to.equal("no-cache");
      expect(served.headers.get("content-security-policy")).to.include("connect-src 'self'");
    } finally {
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
