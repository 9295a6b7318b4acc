/**
 * The packages from CommonJS: every entry point loads with `require`, and is the very module the ES module
 * entry points hand out (one instance of each class whichever way it is loaded). Prints one JSON line.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- `require` is what this file checks */
import assert = require("node:assert/strict");
import sdk = require("@surety/sdk");
import sdkX402 = require("@surety/sdk/x402");
import x402 = require("@surety/x402");
import paywall = require("@surety/x402/paywall");
import webhooks = require("@surety/x402/webhook-receiver");
import devnet = require("@surety/devnet");

async function main(): Promise<void> {
  assert.equal(typeof sdk.guaranteeId, "function");
  assert.equal(typeof x402.SuretyServerScheme, "function");
  assert.equal(typeof paywall.paywall, "function");
  assert.equal(typeof devnet.startDevnet, "function");
  assert.ok(Object.keys(webhooks).length > 0);
  const esmSdk = await import("@surety/sdk");
  const esmX402 = await import("@surety/x402");
  assert.equal(esmSdk.WireError, sdk.WireError);
  assert.equal(esmX402.SuretyClientScheme, x402.SuretyClientScheme);
  assert.equal(sdkX402.SCHEME, x402.SCHEME);
  console.log(JSON.stringify({ ok: true, sdk: Object.keys(sdk).length, x402: Object.keys(x402).length }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
