/**
 * Shared fixtures for the contract tests: a full deployment through scripts/deploy.ts, funded accounts,
 * clearing-cycle builders (StandardMerkleTree leaves as Core builds them) and V2 certificates built per
 * docs/protocol.md, "Certificates", and signed with sdk/bls.ts.
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { AbiCoder, ZeroAddress, getBytes, toBigInt, type BigNumberish } from "ethers";
import { CERTIFICATE_CLAIMS_TYPES, CERTIFICATE_POLICY_TYPES } from "../../sdk/certificate";
import {
  certificateDomain as sdkCertificateDomain,
  guaranteeId as sdkGuaranteeId,
  validationRequestHash as sdkValidationRequestHash,
} from "../../sdk/ids";
import { MERKLE_LEAF_ENCODING } from "../../sdk/merkle";
import { ethers } from "hardhat";

import { blsKeyFromSecret, blsSign, g2ToEip2537, type BlsKeyPair } from "../../sdk/bls";
import { DEFAULT_TIMINGS, DEV_TEST_TOKENS, deploySurety } from "../../scripts/deploy";
import { FeeOnTransferToken__factory } from "../../typechain-types";

export const ETH = ZeroAddress;
export const TIMINGS = DEFAULT_TIMINGS;
export const OPERATOR_BLS: BlsKeyPair = blsKeyFromSecret("0x" + "11".repeat(32));
export const OTHER_BLS: BlsKeyPair = blsKeyFromSecret("0x" + "22".repeat(32));
/** Big enough for every scenario; tokens are minted to each user. */
export const TOKEN_MINT = 10n ** 30n;

const abi = AbiCoder.defaultAbiCoder();

export async function suretyFixture() {
  const [admin, operator, alice, bob, carol, dave, outsider, validator] = await ethers.getSigners();
  const deployment = await deploySurety(admin, {
    operator: operator.address,
    operatorBlsPublicKey: OPERATOR_BLS.publicKey,
    testTokens: DEV_TEST_TOKENS,
  });
  const { vault, clearingHouse, validationRegistry, testTokens } = deployment;
  const [usd, teth] = testTokens;
  const feeToken = await new FeeOnTransferToken__factory(admin).deploy(100);
  const vaultAddress = await vault.getAddress();
  const clearingHouseAddress = await clearingHouse.getAddress();
  for (const user of [alice, bob, carol, dave, outsider]) {
    for (const token of [usd, teth, feeToken]) {
      await token.mint(user.address, TOKEN_MINT);
      await token.connect(user).approve(vaultAddress, ethers.MaxUint256);
      await token.connect(user).approve(clearingHouseAddress, ethers.MaxUint256);
    }
  }
  const chainId = (await ethers.provider.getNetwork()).chainId;
  return {
    ...deployment,
    vault,
    clearingHouse,
    validationRegistry,
    usd,
    teth,
    feeToken,
    vaultAddress,
    clearingHouseAddress,
    usdAddress: await usd.getAddress(),
    tethAddress: await teth.getAddress(),
    registryAddress: await validationRegistry.getAddress(),
    chainId,
    admin,
    operator,
    alice,
    bob,
    carol,
    dave,
    outsider,
    validator,
  };
}

// ------------------------------------------------------------------------------------ clearing cycles

/** A net position of one participant in one asset (exactly one of debit/credit is non-zero). */
export interface Position {
  asset: string;
  participant: string;
  debit: bigint;
  credit: bigint;
}

export const LEAF_ENCODING = [...MERKLE_LEAF_ENCODING];

/** Everything commitCycle needs plus proofs, built the way Core builds a cycle (docs/protocol.md, "Clearing cycles"). */
export function buildCycle(cycleId: bigint | number, positions: Position[]) {
  const id = BigInt(cycleId);
  const values = positions.map((p) => [id, p.asset, p.participant, p.debit, p.credit]);
  // A cycle with no positions still needs a non-zero root: use a single all-zero placeholder leaf.
  const tree = StandardMerkleTree.of(
    values.length > 0 ? values : [[id, ZeroAddress, ZeroAddress, 0n, 0n]],
    LEAF_ENCODING,
  );
  const totals = new Map<string, { asset: string; totalDebit: bigint; totalCredit: bigint }>();
  for (const p of positions) {
    const t = totals.get(p.asset) ?? { asset: p.asset, totalDebit: 0n, totalCredit: 0n };
    t.totalDebit += p.debit;
    t.totalCredit += p.credit;
    totals.set(p.asset, t);
  }
  const debtors = positions
    .filter((p) => p.debit > 0n)
    .map((p) => ({ asset: p.asset, debtor: p.participant, amount: p.debit }));
  const proofOf = (asset: string, participant: string): string[] => {
    for (const [i, v] of tree.entries()) {
      if (v[1] === asset && v[2] === participant) return tree.getProof(i);
    }
    throw new Error(`no leaf for ${participant} in ${asset}`);
  };
  return { id, root: tree.root, totals: [...totals.values()], debtors, proofOf, tree };
}

/** Net positions of a payer→payee flow: payer owes `amount`, payee is owed it. */
export function transfer(asset: string, payer: string, payee: string, amount: bigint): Position[] {
  return [
    { asset, participant: payer, debit: amount, credit: 0n },
    { asset, participant: payee, debit: 0n, credit: amount },
  ];
}

// ------------------------------------------------------------------------------------ certificates

export interface PolicyFields {
  registry: string;
  validator: string;
  agentId: bigint;
  minScore: number;
  jobHash: string;
  tag: string;
  deadline: bigint;
}

export interface ClaimFields {
  version: bigint;
  domain: string;
  guaranteeId: string;
  user: string;
  recipient: string;
  reqId: bigint;
  amount: bigint;
  asset: string;
  timestamp: bigint;
  policy: string;
}

// Low-level encoders over the sdk's own layouts: tests need claims the sdk would never produce
// (wrong domain, mismatched id, …), so they fill the certificate claims tuple field by field.
export function certificateDomain(chainId: BigNumberish, vault: string): string {
  return sdkCertificateDomain({ chainId: toBigInt(chainId), vault });
}

export function guaranteeId(chainId: BigNumberish, vault: string, user: string, reqId: BigNumberish): string {
  return sdkGuaranteeId({ chainId: toBigInt(chainId), vault }, user, toBigInt(reqId));
}

export function encodePolicy(p: PolicyFields): string {
  return abi.encode(
    [...CERTIFICATE_POLICY_TYPES],
    [p.registry, p.validator, p.agentId, p.minScore, p.jobHash, p.tag, p.deadline],
  );
}

export function encodeClaims(c: ClaimFields): string {
  return abi.encode(
    [...CERTIFICATE_CLAIMS_TYPES],
    [
      c.version,
      c.domain,
      c.guaranteeId,
      c.user,
      c.recipient,
      c.reqId,
      c.amount,
      c.asset,
      c.timestamp,
      c.policy,
    ],
  );
}

export function validationRequestHash(chainId: BigNumberish, p: PolicyFields, id: string): string {
  return sdkValidationRequestHash(toBigInt(chainId), { ...p, deadline: Number(p.deadline) }, id);
}

/** Signs raw claims bytes with a BLS key; returns the contract's signature argument. */
export function signClaims(claims: string, key: BlsKeyPair = OPERATOR_BLS) {
  return g2ToEip2537(blsSign(key.secretKey, getBytes(claims)));
}

export interface V2Input {
  chainId: bigint;
  vault: string;
  user: string;
  recipient: string;
  reqId: bigint;
  amount: bigint;
  asset: string;
  policy: PolicyFields;
  timestamp?: bigint;
}

/** A V2 certificate as Core would issue it: claims, their fields, id, request hash and signature. */
export function v2Certificate(input: V2Input, overrides: Partial<ClaimFields> = {}, key = OPERATOR_BLS) {
  const id = guaranteeId(input.chainId, input.vault, input.user, input.reqId);
  const fields: ClaimFields = {
    version: 2n,
    domain: certificateDomain(input.chainId, input.vault),
    guaranteeId: id,
    user: input.user,
    recipient: input.recipient,
    reqId: input.reqId,
    amount: input.amount,
    asset: input.asset,
    timestamp: input.timestamp ?? 1_700_000_000n,
    policy: encodePolicy(input.policy),
    ...overrides,
  };
  const claims = encodeClaims(fields);
  return {
    claims,
    fields,
    guaranteeId: fields.guaranteeId,
    requestHash: validationRequestHash(input.chainId, input.policy, id),
    signature: signClaims(claims, key),
  };
}
