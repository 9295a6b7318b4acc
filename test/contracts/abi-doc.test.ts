/**
 * docs/abi.md is generated from the compiled contracts (scripts/abi-doc.ts). Integrators decode
 * reverts and build calls from it, so a contract change that leaves it stale must fail here.
 */
import { existsSync, readFileSync } from "node:fs";
import { expect } from "chai";
import { Interface } from "ethers";
import { artifacts } from "hardhat";
import { ABI_DOC_CONTRACTS, ABI_DOC_PATH, buildAbiDoc } from "../../scripts/abi-doc";

describe("docs/abi.md (contract ABI reference)", () => {
  it("is what `npm run abi-doc` generates from the contracts as compiled now", async () => {
    const expected = await buildAbiDoc(artifacts);
    const committed = existsSync(ABI_DOC_PATH) ? readFileSync(ABI_DOC_PATH, "utf8") : "";
    // Not a deep diff in the failure: the page is hundreds of lines; the remedy is one command.
    if (committed !== expected) {
      const committedLines = committed.split("\n");
      const first = expected.split("\n").findIndex((line, i) => line !== committedLines[i]);
      expect.fail(
        `docs/abi.md is out of date with the contracts (first difference at line ${first + 1}): ` +
          "run npm run abi-doc and commit docs/abi.md",
      );
    }
  });

  it("lists every function, event and error selector of the documented contracts", async () => {
    const page = await buildAbiDoc(artifacts);
    for (const { fqn } of ABI_DOC_CONTRACTS) {
      const { abi } = await artifacts.readArtifact(fqn);
      const iface = new Interface(abi);
      iface.forEachFunction((fn) => expect(page).to.include(`\`${fn.selector}\``, `${fqn} ${fn.name}`));
      iface.forEachEvent((event) =>
        expect(page).to.include(`\`${event.topicHash}\``, `${fqn} ${event.name}`),
      );
      iface.forEachError((error) => expect(page).to.include(`\`${error.selector}\``, `${fqn} ${error.name}`));
    }
    // The selector the devnet integrator could not decode, and Solidity's own reverts.
    expect(page).to.match(
      /\| `0xf5f542ae` \| `WithdrawalNotReady\(uint64 withdrawalId, uint64 finalizableAt\)` \| Vault \|/,
    );
    expect(page).to.include("| `0x08c379a0` | `Error(string)` |");
    expect(page).to.include("| `0x4e487b71` | `Panic(uint256)` |");
  });

  it("is deterministic", async () => {
    expect(await buildAbiDoc(artifacts)).to.equal(await buildAbiDoc(artifacts));
  });
});
