/**
 * The pieces of the packages' build and of startDevnet that are plain functions: the kits' imports of the
 * protocol rewritten to @surety/sdk (packages/build.ts), and the devnet's ready line read back
 * (scripts/devnet/ready.ts). test/packages/consumer.test.ts checks the packages as installed.
 */
import { expect } from "chai";
import { sdkImportsAsPackage } from "../../packages/build";
import { READY_MARKER, parseReadyLine } from "../../scripts/devnet/ready";

describe("packages/build.ts: a kit's imports of the protocol", () => {
  it("become @surety/sdk subpaths (the index: the package itself), in JavaScript and declarations", () => {
    const js = 'const x402_1 = require("../../x402");\nconst sdk = require("../../index");';
    expect(sdkImportsAsPackage(js, "kits/x402-scheme/server.js")).to.equal(
      'const x402_1 = require("@surety/sdk/x402");\nconst sdk = require("@surety/sdk");',
    );
    const dts =
      'import type { Certificate } from "../certificate";\nexport type W = import("../webhooks").W;';
    expect(sdkImportsAsPackage(dts, "kits/webhook-receiver.d.ts")).to.equal(
      'import type { Certificate } from "@surety/sdk/certificate";\nexport type W = import("@surety/sdk/webhooks").W;',
    );
  });

  it("stay relative between kits, leave packages alone, and refuse a path out of sdk/", () => {
    const text =
      'require("./ledger"); require("../x402-scheme/ledger"); require("ethers"); require("node:crypto");';
    expect(sdkImportsAsPackage(text, "kits/paywall/index.js")).to.equal(text);
    expect(() =>
      sdkImportsAsPackage('require("../../../operator/config")', "kits/paywall/routes.js"),
    ).to.throw(/leaves sdk\//);
  });
});

describe("scripts/devnet/ready.ts: the devnet's ready line", () => {
  it("gives its name=value fields, and null for any other line", () => {
    const line =
      `[devnet] ${READY_MARKER} rpc=http://127.0.0.1:8545 core=http://127.0.0.1:8080 ` +
      "facilitator=http://127.0.0.1:8402 console=http://127.0.0.1:8080/console/ (12.3 s)";
    expect(parseReadyLine(line)).to.deep.equal({
      rpc: "http://127.0.0.1:8545",
      core: "http://127.0.0.1:8080",
      facilitator: "http://127.0.0.1:8402",
      console: "http://127.0.0.1:8080/console/",
    });
    expect(parseReadyLine("[devnet] core: healthy at http://127.0.0.1:8080 in 2.1 s")).to.equal(null);
  });
});
