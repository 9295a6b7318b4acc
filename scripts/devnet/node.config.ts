/**
 * Hardhat configuration of the devnet's node (`hardhat --config scripts/devnet/node.config.ts node`):
 * the project's chain (hardfork prague, as hardhat.config.ts) kept on wall-clock time.
 *
 * Core judges chain deadlines by the timestamp of the head it has indexed (docs/operator-async.md,
 * "Which clock"). Hardhat's defaults break that on a devnet two ways: automine stamps every block at
 * least a second after the previous one, so a burst of transactions pushes the chain ahead of the wall
 * clock (54 s after 60 quick transactions, measured), and an idle automine chain mines nothing, so its
 * time stands still and no deadline ever passes. Blocks with the same timestamp keep the first at 0 s
 * drift; a block every second keeps chain time moving while nobody transacts. The in-process test
 * network keeps Hardhat's defaults: tests move time explicitly.
 *
 * A node needs only its network: this file loads no plugin and no compiler settings (hardhat.config.ts
 * loads the toolbox), so that @surety/devnet runs it compiled with nothing but `hardhat` installed.
 */
import path from "node:path";
import type { HardhatUserConfig } from "hardhat/config";

/** The devnet node mines a block at least this often (milliseconds), transactions or not. */
export const DEVNET_BLOCK_INTERVAL_MS = 1_000;

const config: HardhatUserConfig = {
  // Relative to the project (or to @surety/devnet's dist/), not to this file's directory.
  paths: { root: path.resolve(__dirname, "..", "..") },
  networks: {
    hardhat: {
      // The EIP-2537 BLS12-381 precompiles (0x0b–0x11) the Vault verifies certificates with.
      hardfork: "prague",
      allowBlocksWithSameTimestamp: true,
      mining: { auto: true, interval: DEVNET_BLOCK_INTERVAL_MS },
    },
  },
};

export default config;
