// Builds the blst-minsig Node-API addon (src/blst_minsig.c + blst's C sources from the npm package
// `blst-sources`, i.e. @chainsafe/blst@0.2.11) with node-gyp. Run by the root package's `postinstall`,
// so `npm ci` compiles it (≈ 20 s; needs python3, make and a C compiler, as better-sqlite3 does).
// SURETY_SKIP_BLS_ADDON=1 skips the build: sdk/bls.ts then signs with @noble/curves (≈ 60× slower).
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

if (process.env.SURETY_SKIP_BLS_ADDON === "1") {
  console.log("blst-minsig: SURETY_SKIP_BLS_ADDON=1, not built (BLS falls back to @noble/curves)");
  process.exit(0);
}
// npm hands its own node-gyp to lifecycle scripts; outside npm, use the pinned one in node_modules.
const nodeGyp = process.env.npm_config_node_gyp || require.resolve("node-gyp/bin/node-gyp.js");
const result = spawnSync(process.execPath, [nodeGyp, "rebuild", "--release"], {
  cwd: __dirname,
  stdio: "inherit",
});
if (result.status !== 0) {
  console.error(
    `blst-minsig: the native BLS addon failed to build (node-gyp exit ${result.status}); ` +
      "set SURETY_SKIP_BLS_ADDON=1 to install without it (slow pure-JS signing)",
  );
  process.exit(result.status || 1);
}
console.log(`blst-minsig: built ${path.join(__dirname, "build/Release/blst_minsig.node")}`);
