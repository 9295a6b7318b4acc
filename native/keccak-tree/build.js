// Builds the keccak-tree Node-API addon (src/keccak_tree.c: keccak256, one Merkle level per call, an
// in-place sort of 32-byte hashes) with node-gyp. Run by the root package's `postinstall`, after
// native/blst-minsig, so `npm ci` compiles it (a few seconds; python3, make and a C compiler).
// SURETY_SKIP_KECCAK_ADDON=1 skips the build: operator/clearing/native-keccak.ts then uses JavaScript
// (the `keccak` package and @noble/hashes; same results, the guarantees root ≈ 5× slower).
"use strict";
require("../build-addon").buildAddon({
  dir: __dirname,
  name: "keccak-tree",
  file: "keccak_tree.node",
  skipVariable: "SURETY_SKIP_KECCAK_ADDON",
  skipped: "the guarantees root is hashed in JavaScript",
  withoutIt: "slower guarantees roots in JavaScript",
});
