// A `--require` hook for `BENCH_PROFILE_SIGNAL=1 npm run bench:paid-request` (docs/benchmarks.md, "A paid
// request, hop by hop"): each SIGUSR2 starts, then stops and writes, a V8 CPU profile of the process
// (`--cpu-prof` is not allowed in NODE_OPTIONS). Files: BENCH_PROFILE_DIR (default <tmp>/surety-profiles),
// named <pid>-<n>-<script>.cpuprofile; open them in Chrome DevTools. Sampling every 100 µs.
//   BENCH_PROFILE_SIGNAL=1 BENCH_CHILD_NODE_OPTIONS="--require $PWD/scripts/bench/profile-on-signal.js" \
//     node -r ./scripts/bench/profile-on-signal.js -r ts-node/register/transpile-only scripts/bench/paid-request.ts
/* global require, process */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS hook loaded by --require */
"use strict";
const inspector = require("node:inspector");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const dir = process.env.BENCH_PROFILE_DIR || path.join(os.tmpdir(), "surety-profiles");
const SAMPLING_INTERVAL_US = 100;
let session = null;
let written = 0;

process.on("SIGUSR2", () => {
  if (session === null) {
    session = new inspector.Session();
    session.connect();
    session.post("Profiler.enable", () =>
      session.post("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US }, () =>
        session.post("Profiler.start"),
      ),
    );
    return;
  }
  const running = session;
  session = null;
  running.post("Profiler.stop", (error, result) => {
    running.disconnect();
    if (error) return;
    const script = path.basename(process.argv[1] || "node").replace(/[^A-Za-z0-9.-]+/g, "_");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, `${process.pid}-${written++}-${script}.cpuprofile`),
      JSON.stringify(result.profile),
    );
  });
});
