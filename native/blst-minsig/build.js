// Builds the blst-minsig Node-API addon (src/blst_minsig.c + blst's C sources from the npm package
// `blst-sources`, i.e. @chainsafe/blst@0.2.11) with node-gyp. Run by the root package's `postinstall`,
// so `npm ci` compiles it (≈ 20 s; needs python3, make and a C compiler, as better-sqlite3 does).
// SURETY_SKIP_BLS_ADDON=1 skips the build: sdk/bls.ts then signs with @noble/curves (≈ 60× slower), and
// Core refuses to start on it unless SURETY_ALLOW_SLOW_BLS=true (operator/startup.ts, checkBlsBackend).
"use strict";
require("../build-addon").buildAddon({
  dir: __dirname,
  name: "blst-minsig",
  file: "blst_minsig.node",
  skipVariable: "SURETY_SKIP_BLS_ADDON",
  skipped: "BLS falls back to @noble/curves",
  withoutIt: "slow pure-JS signing: Core then starts only with SURETY_ALLOW_SLOW_BLS=true",
});
