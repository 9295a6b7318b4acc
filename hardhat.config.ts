import { extendProvider, subtask } from "hardhat/config";
import { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD } from "hardhat/builtin-tasks/task-names";
import type { HardhatUserConfig } from "hardhat/config";
import "@nomicfoundation/hardhat-toolbox";

import { SnapshotClockProvider } from "./test/support/snapshot-clock";

// The pinned solc-js (npm package `solc`) compiles offline; Hardhat's default
// would download a native compiler, which these machines cannot reach.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SOLC_VERSION: string = require("solc/package.json").version;

subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args: { solcVersion: string }, _hre, runSuper) => {
  if (args.solcVersion !== SOLC_VERSION) return runSuper();
  return {
    compilerPath: require.resolve("solc/soljson.js"),
    isSolcJs: true,
    version: SOLC_VERSION,
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    longVersion: require("solc").version() as string,
  };
});

// EDR moves the clock forward on `evm_revert` (every `loadFixture`) by twice the time since the snapshot:
// fixtures resume at their snapshot's time instead (test/support/snapshot-clock.ts).
extendProvider((provider, _config, network) =>
  network === "hardhat" ? new SnapshotClockProvider(provider) : provider,
);

const config: HardhatUserConfig = {
  solidity: {
    // The `compilers` form: with a top-level `version`, Hardhat 2 drops `overrides` silently.
    compilers: [
      {
        version: SOLC_VERSION,
        settings: {
          // OpenZeppelin 5 uses `mcopy`; the BLS precompiles (EIP-2537) are plain
          // staticcalls, so compiling for cancun is enough even on a prague chain.
          evmVersion: "cancun",
          optimizer: { enabled: true, runs: 200 },
          viaIR: false,
        },
      },
    ],
  },
  networks: {
    hardhat: {
      // prague activates the EIP-2537 BLS12-381 precompiles (0x0b–0x11).
      hardfork: "prague",
    },
    localhost: {
      url: process.env.SURETY_RPC_URL ?? "http://127.0.0.1:8545",
      hardfork: "prague",
    },
    // Any other EVM chain, by configuration alone: `npm run deploy -- --network custom`.
    ...(process.env.SURETY_DEPLOY_RPC_URL
      ? {
          custom: {
            url: process.env.SURETY_DEPLOY_RPC_URL,
            accounts: process.env.SURETY_DEPLOYER_PRIVATE_KEY
              ? [process.env.SURETY_DEPLOYER_PRIVATE_KEY]
              : [],
          },
        }
      : {}),
  },
  typechain: {
    outDir: "typechain-types",
    target: "ethers-v6",
  },
  mocha: {
    timeout: 120_000,
  },
  gasReporter: {
    enabled: process.env.REPORT_GAS === "1",
    offline: true,
  },
};

export default config;
