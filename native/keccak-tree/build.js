// Builds the keccak-tree Node-API addon (src/keccak_tree.c: keccak256, one Merkle level per call, an
// in-place sort of 32-byte hashes) with node-gyp. Run by the root package's `postinstall`, after
// native/blst-minsig, so `npm ci` compiles it (a few seconds; python3, make and a C compiler).
// SURETY_SKIP_KECCAK_ADDON=1 skips the build: operator/clearing/native-keccak.ts then uses JavaScript
// (the `keccak` package and @noble/hashes; same results, the guarantees root ≈ 5× slower).
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

if (process.env.SURETY_SKIP_KECCAK_ADDON === "1") {
  console.log(
    "keccak-tree: SURETY_SKIP_KECCAK_ADDON=1, not built (the guarantees root is hashed in JavaScript)",
  );
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
    `keccak-tree: the native keccak addon failed to build (node-gyp exit ${result.status}); ` +
      "set SURETY_SKIP_KECCAK_ADDON=1 to install without it (slower guarantees roots in JavaScript)",
  );
  process.exit(result.status || 1);
}
console.log(`keccak-tree: built ${path.join(__dirname, "build/Release/keccak_tree.node")}`);
