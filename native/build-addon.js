// Builds one of the repository's Node-API addons with node-gyp (its build.js says which and why). Run by
// the root package's `postinstall` through each addon's build.js, so `npm ci` compiles them (python3,
// make and a C compiler, as better-sqlite3 needs). An addon's skip variable set to 1 skips its build:
// the code that loads it falls back to JavaScript with the same results.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

/**
 * @param {{ dir: string, name: string, file: string, skipVariable: string, skipped: string, withoutIt: string }} addon
 *   dir: the addon's directory; name: its log prefix; file: the built `.node` file's name; skipVariable: the
 *   environment variable that skips it; skipped: what runs instead (logged when skipped); withoutIt: what
 *   installing without it costs (logged when the build fails).
 */
function buildAddon(addon) {
  if (process.env[addon.skipVariable] === "1") {
    console.log(`${addon.name}: ${addon.skipVariable}=1, not built (${addon.skipped})`);
    process.exit(0);
  }
  // npm hands its own node-gyp to lifecycle scripts; outside npm, use the pinned one in node_modules.
  const nodeGyp = process.env.npm_config_node_gyp || require.resolve("node-gyp/bin/node-gyp.js");
  const result = spawnSync(process.execPath, [nodeGyp, "rebuild", "--release"], {
    cwd: addon.dir,
    stdio: "inherit",
  });
  if (result.status !== 0) {
    console.error(
      `${addon.name}: the addon failed to build (node-gyp exit ${result.status}); ` +
        `set ${addon.skipVariable}=1 to install without it (${addon.withoutIt})`,
    );
    process.exit(result.status || 1);
  }
  console.log(`${addon.name}: built ${path.join(addon.dir, "build/Release", addon.file)}`);
}

module.exports = { buildAddon };
