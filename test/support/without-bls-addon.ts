/**
 * Preloaded (`node -r ts-node/register/transpile-only -r ./test/support/without-bls-addon.ts …`) into a
 * process that must run as if native/blst-minsig had not been built (a `node_modules` copied rather than
 * installed, a failed build): resolving the addon fails as it does when its `build/` is missing, so
 * sdk/bls.ts picks the pure-JavaScript fallback. Nothing else changes.
 *
 * Inert unless `SURETY_TEST_WITHOUT_BLS_ADDON=1`: `hardhat test` loads every file under test/, this one
 * included, and the hook must not hide the addon from the test process itself.
 */
import Module from "node:module";
import { sep } from "node:path";

const ADDON_DIR = `${sep}native${sep}blst-minsig${sep}`;

type Resolve = (request: string, parent: unknown, isMain: boolean, options: unknown) => string;
const moduleInternals = Module as unknown as { _resolveFilename: Resolve };
const resolve = moduleInternals._resolveFilename;

if (process.env.SURETY_TEST_WITHOUT_BLS_ADDON === "1") installHook();

function installHook(): void {
  moduleInternals._resolveFilename = function (request, parent, isMain, options) {
    const resolved = resolve.call(this, request, parent, isMain, options);
    if (resolved.includes(ADDON_DIR)) {
      const error = new Error(`Cannot find module '${request}' (test/support/without-bls-addon.ts)`);
      (error as NodeJS.ErrnoException).code = "MODULE_NOT_FOUND";
      throw error;
    }
    return resolved;
  };
}
