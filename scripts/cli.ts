/**
 * `npm run cli -- <command> [flags]`: a payer's and a recipient's everyday operations against a deployment
 * (deployments/<network>.json) and its Core. Run without arguments for the usage text.
 */
import { parseArgs } from "node:util";
import { WireError } from "../sdk/errors";
import {
  type Flags,
  balance,
  disputeGuarantee,
  claimNetCredit,
  deposit,
  finalizeWithdrawal,
  payNetDebit,
  registerReserve,
  remunerate,
  requestWithdrawal,
  signGuaranteeCommand,
  voidDebit,
  withdrawPayout,
} from "./cli/commands";
import { CliContext, CliError, PRIVATE_KEY_ENV, SESSION_FILE_ENV } from "./cli/context";
import { cycles, guarantee, guarantees, login, logout } from "./cli/reads";

type Command = (ctx: CliContext, flags: Flags) => Promise<void>;

const COMMANDS: Record<string, { run: Command; flags: string[]; summary: string; positional?: string }> = {
  login: {
    run: login,
    flags: [],
    summary:
      "[--account i | --key-file f] [--session f]  sign in to Core (SIWE); the session is stored for the reads",
  },
  logout: {
    run: logout,
    flags: [],
    summary: "[--session f]                               revoke the stored session on Core and forget it",
  },
  guarantees: {
    run: guarantees,
    flags: ["as", "state", "asset", "limit", "cursor", "json"],
    summary:
      "[--as payer|recipient] [--state S] [--asset …] [--limit n] [--cursor c] [--json]\n" +
      "                                                  your guarantees, newest first (signed in)",
  },
  guarantee: {
    run: guarantee,
    flags: ["id", "json"],
    positional: "id",
    summary:
      "<id> [--json]                                one guarantee, its timeline, its certificate checked\n" +
      "                                                  against the Vault's operator key (signed in)",
  },
  cycles: {
    run: cycles,
    flags: ["limit", "before", "json"],
    summary:
      "[--limit n] [--before id] [--json]          committed clearing cycles, newest first (your debits with a key)",
  },
  deposit: {
    run: deposit,
    flags: ["asset", "amount", "base-units"],
    summary:
      "--amount <n> [--asset ETH|tUSD|tETH|0x…]   deposit collateral in the Vault (approves tokens first)",
  },
  balance: {
    run: balance,
    flags: ["asset", "address"],
    summary: "[--asset …] [--address 0x…]                on-chain balances and Core's view of the collateral",
  },
  "request-withdrawal": {
    run: requestWithdrawal,
    flags: ["asset", "amount", "base-units"],
    summary:
      "--amount <n> [--asset …]                    start a withdrawal (finalizable after the grace period)",
  },
  "finalize-withdrawal": {
    run: finalizeWithdrawal,
    flags: ["asset"],
    summary: "[--asset …]                                  finalize the open withdrawal",
  },
  "sign-guarantee": {
    run: signGuaranteeCommand,
    flags: ["asset", "amount", "base-units", "to", "req-id", "scheme", "timestamp", "policy"],
    summary:
      "--to 0x… --amount <n> [--asset …] [--scheme eip712|eip191] [--req-id n] [--policy <json|file>]\n" +
      "                                                  print a signed request for POST /core/guarantees",
  },
  "pay-net-debit": {
    run: payNetDebit,
    flags: ["asset", "cycle"],
    summary: "--cycle <id> [--asset …]                     pay your net debit of a committed cycle",
  },
  "dispute-guarantee": {
    run: disputeGuarantee,
    flags: ["asset", "cycle", "position"],
    summary:
      "--cycle <id> [--asset …] [--position <n>]    dispute one guarantee of your own net debit (challenge window)",
  },
  "void-debit": {
    run: voidDebit,
    flags: ["asset", "cycle", "debtor"],
    summary:
      "--cycle <id> [--asset …] [--debtor 0x…]      void a debit whose dispute Core left unanswered past the answer deadline",
  },
  "claim-net-credit": {
    run: claimNetCredit,
    flags: ["asset", "cycle", "participant", "credit", "summary", "proof", "to"],
    summary:
      "--cycle <id> [--asset …] [--participant 0x…] [--to 0x…]  claim a net credit (proof from Core, or\n" +
      "                                                  --credit n --summary '[…]' --proof '[…]'); your own is then withdrawn to --to",
  },
  "withdraw-payout": {
    run: withdrawPayout,
    flags: ["asset", "to"],
    summary:
      "[--asset …] [--to 0x…]                       withdraw what the ClearingHouse set aside for you (credits, refunds)",
  },
  "register-reserve": {
    run: registerReserve,
    flags: ["certificate", "payer-signature", "scheme"],
    summary:
      "--certificate <json|file> [--payer-signature 0x… --scheme …]  hold a V2 guarantee's amount of the payer's collateral",
  },
  remunerate: {
    run: remunerate,
    flags: ["certificate", "payer-signature", "scheme"],
    summary:
      "--certificate <json|file> [--payer-signature 0x… --scheme eip712|eip191]  remunerate a validated V2 guarantee",
  },
};

const COMMON_FLAGS = ["network", "deployment", "rpc", "core", "account", "key-file", "session", "help"];
const BOOLEAN_FLAGS = new Set(["base-units", "help", "json"]);

function usage(): string {
  const lines = [
    "Usage: npm run cli -- <command> [flags]",
    "",
    "Commands:",
    ...Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(20)} ${summary}`),
    "",
    "Common flags:",
    "  --network <name>      deployment to use: deployments/<name>.json (default localhost)",
    "  --deployment <file>   an explicit deployment file instead",
    "  --rpc <url>           chain RPC (default: SURETY_RPC_URL, the file's urls.rpc, http://127.0.0.1:8545)",
    "  --core <url>          Core (default: SURETY_CORE_URL, the file's urls.core, http://127.0.0.1:8080)",
    `  --account <i>         act as Hardhat dev account i (chain 31337 only); otherwise --key-file or ${PRIVATE_KEY_ENV}`,
    "  --key-file <file>     act as the key in this file (0x + 64 hex digits)",
    `  --session <file>      login's session file (default: ${SESSION_FILE_ENV}, else ~/.config/surety/cli-session.json)`,
    "  --base-units          --amount is in base units (wei, 10^-6 tUSD …) instead of whole tokens",
    "",
    "Examples:",
    "  npm run cli -- deposit --account 1 --amount 1",
    "  npm run cli -- deposit --account 1 --asset tUSD --amount 250",
    "  npm run cli -- balance --account 1",
    "  npm run cli -- sign-guarantee --account 1 --to 0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC --amount 0.001",
    "  npm run cli -- login --account 1",
    "  npm run cli -- guarantees --as payer --state FINALIZED_PAYABLE",
    "  npm run cli -- guarantee 0x9c…(the 32-byte id)",
    "  npm run cli -- cycles --limit 3",
    "  npm run cli -- dispute-guarantee --account 1 --cycle 3 --asset tUSD --position 0",
    "  npm run cli -- void-debit --account 1 --cycle 3 --asset tUSD",
    "  npm run cli -- claim-net-credit --account 2 --cycle 3 --asset tUSD",
    "  npm run cli -- withdraw-payout --account 2 --asset tUSD --to 0x90F79bf6EB2c4f870365E785982E1f101E93b906",
  ];
  return lines.join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return 2;
  }
  const allowed = new Set([...COMMON_FLAGS, ...command.flags]);
  const options = Object.fromEntries(
    [...allowed].map((flag) => [flag, { type: BOOLEAN_FLAGS.has(flag) ? "boolean" : "string" }]),
  ) as Record<string, { type: "string" | "boolean" }>;
  let values: Flags;
  try {
    let positionals: string[];
    ({ values, positionals } = parseArgs({
      args: rest,
      options,
      strict: true,
      allowPositionals: command.positional !== undefined,
    }));
    // A command's one positional argument (`guarantee <id>`) is its flag of the same name.
    if (command.positional !== undefined && positionals.length > 0) {
      if (positionals.length > 1 || values[command.positional] !== undefined) {
        throw new Error(`takes one ${command.positional}`);
      }
      values[command.positional] = positionals[0];
    }
  } catch (error) {
    console.error(`${name}: ${(error as Error).message}\n  ${name} ${command.summary}`);
    return 2;
  }
  if (values.help) {
    console.log(`npm run cli -- ${name} ${command.summary}`);
    return 0;
  }
  const ctx = CliContext.load({
    network: (values.network as string | undefined) ?? "localhost",
    deployment: values.deployment as string | undefined,
    rpc: values.rpc as string | undefined,
    core: values.core as string | undefined,
    account: values.account as string | undefined,
    keyFile: values["key-file"] as string | undefined,
    session: values.session as string | undefined,
  });
  try {
    await command.run(ctx, values);
  } finally {
    ctx.provider.destroy();
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof CliError || error instanceof WireError) {
        console.error(`error: ${error.message}`);
      } else if ((error as { code?: string }).code === "ECONNREFUSED" || /ECONNREFUSED/.test(String(error))) {
        console.error(
          `error: the chain RPC does not answer (${(error as Error).message}); is the devnet running?`,
        );
      } else {
        console.error(error);
      }
      process.exit(1);
    },
  );
}
