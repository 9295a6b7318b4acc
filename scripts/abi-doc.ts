/**
 * Writes docs/abi.md, the contract ABI reference, from the compiled artifacts (`npm run abi-doc`):
 * every external/public function (signature, selector, mutability, NatSpec), event (signature,
 * topic0) and custom error (signature, selector) of the contracts a deployment holds, plus one table
 * of every revert selector, so an integrator can build calls and decode any revert without reading
 * Solidity. `test/contracts/abi-doc.test.ts` regenerates it in memory and fails when the committed
 * page differs.
 *
 * Deterministic: the page depends only on the ABIs and the NatSpec the compiler emits (no dates,
 * paths or compiler versions), and every list is sorted.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { ErrorFragment, EventFragment, FunctionFragment, type ParamType, id } from "ethers";
import type { Artifacts, HardhatRuntimeEnvironment } from "hardhat/types";

export const ABI_DOC_PATH = path.join(__dirname, "..", "docs", "abi.md");

/** What the page documents: what `scripts/deploy.ts` deploys, test tokens last. */
export const ABI_DOC_CONTRACTS: readonly { fqn: string; role: string }[] = [
  {
    fqn: "contracts/Vault.sol:Vault",
    role: "holds collateral; withdrawals; V2 `remunerate` and reserves (run by its linked libraries RemunerationLogic and ReserveLogic); timings",
  },
  {
    fqn: "contracts/ClearingHouse.sol:ClearingHouse",
    role: "clearing cycles: commit (linked library CycleCommitLogic), pay, claim, default cover, challenges, veto, double listings, bond",
  },
  {
    fqn: "contracts/GuaranteeVerifier.sol:GuaranteeVerifier",
    role: "stateless, shared by the Vault (`guaranteeVerifier()`) and the ClearingHouse: decodes claims, checks Core's BLS certificate and the payer's signature; its reverts reach the callers of `remunerate`, `registerReserve` and `answerChallenge`",
  },
  {
    fqn: "contracts/ValidationRegistry.sol:ValidationRegistry",
    role: "ERC-8004-style validation requests and responses",
  },
  { fqn: "contracts/test/TestToken.sol:TestToken", role: "ERC-20 test tokens on dev networks (tUSD, tETH)" },
];

/** Reverts every contract can produce without declaring them: Solidity's own. */
const BUILTIN_ERRORS: readonly { signature: string; notice: string }[] = [
  { signature: "Error(string)", notice: '`require(…, "reason")` / `revert("reason")`' },
  {
    signature: "Panic(uint256)",
    notice: "compiler-inserted check failed (0x01 assert, 0x11 overflow, 0x12 division by zero, 0x32 index)",
  },
];

interface NatSpecEntry {
  notice?: string;
  details?: string;
}

interface NatSpec {
  notice?: string;
  title?: string;
  details?: string;
  methods: Record<string, NatSpecEntry>;
  events: Record<string, NatSpecEntry>;
  errors: Record<string, NatSpecEntry[]>;
}

interface CompilerMetadata {
  output: {
    userdoc?: {
      notice?: string;
      methods?: Record<string, { notice?: string }>;
      events?: Record<string, { notice?: string }>;
      errors?: Record<string, { notice?: string }[]>;
    };
    devdoc?: {
      title?: string;
      details?: string;
      methods?: Record<string, { details?: string }>;
      events?: Record<string, { details?: string }>;
      errors?: Record<string, { details?: string }[]>;
    };
  };
}

/** NatSpec merged from the compiler's userdoc (notices) and devdoc (details, title). */
async function natSpecOf(artifacts: Artifacts, fqn: string): Promise<NatSpec> {
  const buildInfo = await artifacts.getBuildInfo(fqn);
  if (buildInfo === undefined) throw new Error(`no build info for ${fqn}: compile first`);
  const [source, name] = fqn.split(":");
  const metadataText = (buildInfo.output.contracts[source]?.[name] as { metadata?: string } | undefined)
    ?.metadata;
  if (metadataText === undefined) throw new Error(`no compiler metadata for ${fqn}`);
  const { userdoc = {}, devdoc = {} } = (JSON.parse(metadataText) as CompilerMetadata).output;
  const merge = <T extends NatSpecEntry>(
    notices: Record<string, { notice?: string }> = {},
    details: Record<string, { details?: string }> = {},
  ): Record<string, T> => {
    const out: Record<string, NatSpecEntry> = {};
    for (const key of new Set([...Object.keys(notices), ...Object.keys(details)])) {
      out[key] = { notice: notices[key]?.notice, details: details[key]?.details };
    }
    return out as Record<string, T>;
  };
  const errors: Record<string, NatSpecEntry[]> = {};
  for (const key of new Set([...Object.keys(userdoc.errors ?? {}), ...Object.keys(devdoc.errors ?? {})])) {
    const notices = userdoc.errors?.[key] ?? [];
    const details = devdoc.errors?.[key] ?? [];
    const count = Math.max(notices.length, details.length);
    errors[key] = Array.from({ length: count }, (_, i) => ({
      notice: notices[i]?.notice,
      details: details[i]?.details,
    }));
  }
  return {
    notice: userdoc.notice,
    title: devdoc.title,
    details: devdoc.details,
    methods: merge(userdoc.methods, devdoc.methods),
    events: merge(userdoc.events, devdoc.events),
    errors,
  };
}

/** One line of table text: NatSpec may span lines and contain pipes. */
function cell(text: string | undefined): string {
  if (text === undefined) return "";
  return text.replace(/\s+/g, " ").trim().replace(/\|/g, "\\|");
}

function describe(entry: NatSpecEntry | undefined): string {
  if (entry === undefined) return "";
  const parts = [entry.notice, entry.details].filter((part): part is string => !!part && part.trim() !== "");
  return cell(parts.join(" "));
}

/** `type name` list with tuples spelled out, e.g. `(uint64 cycleLength, …) t`. */
function params(list: readonly ParamType[]): string {
  return list.map((param) => param.format("full").replace(/^tuple/, "")).join(", ");
}

function code(text: string): string {
  // A backtick inside a code span would end it; ABI text never holds one, but stay safe.
  return "`" + text.replace(/`/g, "'") + "`";
}

/** Code-point order (never the host's locale), case-insensitive first so `ETH` sits among the e's. */
function compareText(a: string, b: string): number {
  const [la, lb] = [a.toLowerCase(), b.toLowerCase()];
  if (la !== lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function byName<T extends { name: string; format(kind: "sighash"): string }>(a: T, b: T): number {
  return compareText(a.name, b.name) || compareText(a.format("sighash"), b.format("sighash"));
}

interface RevertEntry {
  selector: string;
  /** Canonical form (types only): two contracts may name the parameters of one error differently. */
  sighash: string;
  /** With parameter names, as the first contract declaring it spells it. */
  signature: string;
  contracts: Set<string>;
  notice: string;
}

/** The whole page as markdown. */
export async function buildAbiDoc(artifacts: Artifacts): Promise<string> {
  const lines: string[] = [
    "# Contract ABI reference",
    "",
    "<!-- Generated by `npm run abi-doc` (scripts/abi-doc.ts) from the compiled contracts. Do not edit by hand: -->",
    "<!-- test/contracts/abi-doc.test.ts fails when this page and the contracts differ. -->",
    "",
    "Every external and public function, event and custom error of the contracts a Surety deployment",
    "holds, with the selectors and topics an integrator needs to build calls and decode logs and reverts",
    "without reading Solidity. Addresses of a deployment: `deployments/<network>.json`; decisions behind",
    "the contracts: [contracts.md](contracts.md); how values are encoded: [protocol.md](protocol.md).",
    "",
    "- **Selector**: the first 4 bytes of `keccak256` of the canonical signature (types only, no spaces);",
    "  calldata is the selector followed by the ABI-encoded arguments.",
    "- **topic0**: `keccak256` of an event's canonical signature; `indexed` arguments are the next topics.",
    "- **Reverts**: a custom error's data is its selector followed by its ABI-encoded arguments; look the",
    "  first 4 bytes up in [Revert selectors](#revert-selectors).",
    "- Structs are written as tuples: `(uint64 cycleLength, …) timings` is passed as one tuple argument.",
    "",
  ];

  const reverts = new Map<string, RevertEntry>();
  for (const builtin of BUILTIN_ERRORS) {
    reverts.set(id(builtin.signature).slice(0, 10), {
      selector: id(builtin.signature).slice(0, 10),
      sighash: builtin.signature,
      signature: builtin.signature,
      contracts: new Set(["any"]),
      notice: builtin.notice,
    });
  }

  lines.push("Contents:", "");
  for (const { fqn } of ABI_DOC_CONTRACTS) {
    const name = fqn.split(":")[1];
    lines.push(`- [${name}](#${name.toLowerCase()})`);
  }
  lines.push("- [Revert selectors](#revert-selectors)", "");

  for (const { fqn, role } of ABI_DOC_CONTRACTS) {
    const [source, name] = fqn.split(":");
    const artifact = await artifacts.readArtifact(fqn);
    const natSpec = await natSpecOf(artifacts, fqn);
    lines.push(`## ${name}`, "");
    lines.push(`\`${source}\`: ${role}.`);
    const summary = [natSpec.title, natSpec.notice, natSpec.details].filter(
      (part): part is string => !!part && part.trim() !== "",
    );
    if (summary.length > 0) lines.push("", cell(summary.join(" ")));
    lines.push("");

    const fragments = artifact.abi as readonly unknown[];
    const functions: FunctionFragment[] = [];
    const events: EventFragment[] = [];
    const errors: ErrorFragment[] = [];
    for (const raw of fragments) {
      const type = (raw as { type?: string }).type;
      if (type === "function") functions.push(FunctionFragment.from(raw));
      else if (type === "event") events.push(EventFragment.from(raw));
      else if (type === "error") errors.push(ErrorFragment.from(raw));
    }
    const constructor = fragments.find((raw) => (raw as { type?: string }).type === "constructor") as
      | { inputs: unknown[] }
      | undefined;
    if (constructor !== undefined) {
      const inputs = FunctionFragment.from({ ...constructor, type: "function", name: "constructor" }).inputs;
      lines.push(`Constructor: ${code(`constructor(${params(inputs)})`)}`, "");
    }

    lines.push("### Functions", "");
    lines.push("| Selector | Function | Mutability | NatSpec |", "| --- | --- | --- | --- |");
    for (const fn of [...functions].sort(byName)) {
      const returns = fn.outputs.length > 0 ? ` returns (${params(fn.outputs)})` : "";
      lines.push(
        `| \`${fn.selector}\` | ${code(`${fn.name}(${params(fn.inputs)})${returns}`)} | ${fn.stateMutability} | ${describe(natSpec.methods[fn.format("sighash")])} |`,
      );
    }
    lines.push("");

    lines.push("### Events", "");
    if (events.length === 0) lines.push("None.");
    else {
      lines.push("| topic0 | Event | NatSpec |", "| --- | --- | --- |");
      for (const event of [...events].sort(byName)) {
        const anonymous = event.anonymous ? " anonymous" : "";
        lines.push(
          `| \`${event.topicHash}\` | ${code(`${event.name}(${params(event.inputs)})${anonymous}`)} | ${describe(natSpec.events[event.format("sighash")])} |`,
        );
      }
    }
    lines.push("");

    lines.push("### Errors", "");
    if (errors.length === 0) lines.push("None.");
    else {
      lines.push("| Selector | Error | NatSpec |", "| --- | --- | --- |");
      for (const error of [...errors].sort(byName)) {
        const signature = error.format("sighash");
        const notice = (natSpec.errors[signature] ?? []).map(describe).filter((text) => text !== "");
        const text = [...new Set(notice)].join(" ");
        const named = `${error.name}(${params(error.inputs)})`;
        lines.push(`| \`${error.selector}\` | ${code(named)} | ${text} |`);
        const entry = reverts.get(error.selector);
        if (entry === undefined) {
          reverts.set(error.selector, {
            selector: error.selector,
            sighash: signature,
            signature: named,
            contracts: new Set([name]),
            notice: text,
          });
        } else {
          if (entry.sighash !== signature) {
            throw new Error(`selector clash ${error.selector}: ${entry.sighash} and ${signature}`);
          }
          entry.contracts.add(name);
          if (entry.notice === "") entry.notice = text;
        }
      }
    }
    lines.push("");
  }

  lines.push("## Revert selectors", "");
  lines.push(
    "Every revert these contracts can return, by its first 4 bytes (the contracts' custom errors,",
    "including the ones of the libraries and OpenZeppelin bases they use, and Solidity's built-in two).",
    "A revert bubbles up unchanged through the contracts a call passes: `ClearingHouse.commitCycle` can",
    "return a Vault error, for instance. `Raised by` names the contracts whose ABI declares the error.",
    "",
    "| Selector | Error | Raised by | NatSpec |",
    "| --- | --- | --- | --- |",
  );
  for (const entry of [...reverts.values()].sort((a, b) => compareText(a.selector, b.selector))) {
    const contracts = [...entry.contracts].sort().join(", ");
    lines.push(`| \`${entry.selector}\` | \`${entry.signature}\` | ${contracts} | ${cell(entry.notice)} |`);
  }
  lines.push("");
  return lines.join("\n");
}

async function main(): Promise<void> {
  // Loaded here, not at the top: the test imports buildAbiDoc inside its own Hardhat runtime.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const hre = require("hardhat") as HardhatRuntimeEnvironment;
  await hre.run("compile", { quiet: true });
  const page = await buildAbiDoc(hre.artifacts);
  writeFileSync(ABI_DOC_PATH, page);
  console.log(`wrote ${path.relative(process.cwd(), ABI_DOC_PATH)}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
