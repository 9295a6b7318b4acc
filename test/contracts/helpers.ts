/**
 * Shared fixtures for the contract tests: a full deployment through scripts/deploy.ts, funded accounts,
 * clearing-cycle builders (StandardMerkleTree leaves as Core builds them) and V2 certificates built per
 * docs/protocol.md, "Certificates", and signed with sdk/bls.ts.
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import {
  AbiCoder,
  HDNodeWallet,
  ZeroAddress,
  ZeroHash,
  getBytes,
  id as hashText,
  keccak256,
  toBigInt,
  toUtf8Bytes,
  type BigNumberish,
  type Signer,
  type SigningKey,
  type Typed,
} from "ethers";
import type { SigningScheme } from "../../sdk/claims";
import { GuaranteeHasher, SIGNING_SCHEME_CODES } from "../../sdk/eip712";
import { CERTIFICATE_CLAIMS_TYPES, CERTIFICATE_POLICY_TYPES } from "../../sdk/certificate";
import {
  certificateDomain as sdkCertificateDomain,
  guaranteeId as sdkGuaranteeId,
  validationRequestHash as sdkValidationRequestHash,
} from "../../sdk/ids";
import { MERKLE_LEAF_ENCODING } from "../../sdk/merkle";
import type { GuaranteeClaimsV1 } from "../../sdk/claims";
import { encodeCertificateClaims } from "../../sdk/certificate";
import { signGuarantee } from "../../sdk/eip712";
import {
  SummariesTree,
  NO_CREDIT_PROOF,
  type DebitSummary,
  buildDebitTrees,
  buildDebtorTree,
  creditProofOf as creditProofOfGuarantee,
  debitSummaryProof,
  summaryStruct,
  sumTreeProof,
} from "../../sdk/debit-tree";
import { buildCommitPlan, guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { netCycle, type PayableGuarantee } from "../../operator/clearing/netting";
import { ethers } from "hardhat";

import { time } from "@nomicfoundation/hardhat-network-helpers";
import {
  blsKeyFromSecret,
  blsSign,
  signatureToEip2537,
  type BlsKeyPair,
  type Eip2537G2Point,
} from "../../sdk/bls";
import type { GuaranteeLeaf } from "../../sdk/guarantee-tree";
import { DEFAULT_TIMINGS, DEV_TEST_TOKENS, deploySurety } from "../../scripts/deploy";
import { FeeOnTransferToken__factory, type ClearingHouse } from "../../typechain-types";

export const ETH = ZeroAddress;
export const TIMINGS = DEFAULT_TIMINGS;
/** Seconds from a commit to its payment deadline: challenge window, answer window, payment window. */
export const PAYMENT_DELAY = 2 * TIMINGS.challengeWindow + TIMINGS.paymentWindow;
/** A non-zero guarantees root for cycles whose debits are never challenged in the test. */
export const GUARANTEES_ROOT = keccak256(toUtf8Bytes("test guarantees root"));
export const OPERATOR_BLS: BlsKeyPair = blsKeyFromSecret("0x" + "11".repeat(32));
export const OTHER_BLS: BlsKeyPair = blsKeyFromSecret("0x" + "22".repeat(32));
/** Big enough for every scenario; tokens are minted to each user. */
export const TOKEN_MINT = 10n ** 30n;

const abi = AbiCoder.defaultAbiCoder();

/** `adminTransferDelay`: the Vault's and ClearingHouse's timelock delay (default the deployment's 3 days). */
export async function suretyFixture(options: { adminTransferDelay?: number } = {}) {
  const [admin, operator, alice, bob, carol, dave, outsider, validator, guardian] = await ethers.getSigners();
  const deployment = await deploySurety(admin, {
    ...options,
    operator: operator.address,
    guardian: guardian.address,
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
    guardian,
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
  // The accounts' summaries behind `debitsRoot` (claims prove them): one opaque leaf per side, its amount
  // the position (these cycles are built from net positions, not guarantees).
  const summaries: DebitSummary[] = positions.map((p) => ({
    debtor: p.participant,
    asset: p.asset,
    sumRoot: p.debit > 0n ? keccak256(toUtf8Bytes(`out ${id} ${p.participant} ${p.asset}`)) : ZeroHash,
    total: p.debit,
    depth: 0,
    inRoot: p.credit > 0n ? keccak256(toUtf8Bytes(`in ${id} ${p.participant} ${p.asset}`)) : ZeroHash,
    inTotal: p.credit,
    inDepth: 0,
  }));
  const debits = new SummariesTree(summaries);
  /** `claimNetCredit`'s summary and proof of `participant`: `claimNetCredit(id, asset, who, ...claimOf())`. */
  const claimOf = (asset: string, participant: string): [ReturnType<typeof summaryStruct>, string[]] => {
    const s = summaries.find((x) => x.asset === asset && x.debtor === participant);
    if (s === undefined) throw new Error(`no summary for ${participant} in ${asset}`);
    return [summaryStruct(s), debits.proof(s)];
  };
  return {
    id,
    root: tree.root,
    debitsRoot: debits.root,
    totals: [...totals.values()],
    debtors,
    proofOf,
    claimOf,
    tree,
  };
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
  return signatureToEip2537(blsSign(key.secretKey, getBytes(claims)));
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

/** Replaces the operator key after setup: schedule (first call), wait the timelock delay, execute (second). */
export async function rotateOperatorKey(
  vault: { setOperatorKey(key: Eip2537G2Point): Promise<unknown>; timelockDelay(): Promise<bigint> },
  key: Eip2537G2Point,
): Promise<void> {
  await vault.setOperatorKey(key);
  await time.increase(await vault.timelockDelay());
  await vault.setOperatorKey(key);
}

/** The Vault's timings as `setTimings` takes them (scripts/deploy.ts). */
type TimingsInput = typeof DEFAULT_TIMINGS;

/** The timelocked operation id of `setTimings(timings)`: keccak256(abi.encode(keccak256("VAULT_TIMINGS"), timings)). */
export function timingsOperation(timings: TimingsInput): string {
  return keccak256(
    AbiCoder.defaultAbiCoder().encode(
      ["bytes32", "tuple(uint64,uint64,uint64,uint64,uint64,uint64,uint64)"],
      [
        hashText("VAULT_TIMINGS"),
        [
          timings.cycleLength,
          timings.commitDelay,
          timings.challengeWindow,
          timings.paymentWindow,
          timings.defaultWindow,
          timings.withdrawalGracePeriod,
          timings.confirmationLag,
        ],
      ],
    ),
  );
}

/** Changes the timings after setup: schedule (first call), wait the timelock delay, execute (second). */
export async function applyTimings(
  vault: { setTimings(timings: TimingsInput): Promise<unknown>; timelockDelay(): Promise<bigint> },
  timings: TimingsInput,
): Promise<void> {
  await vault.setTimings(timings);
  await time.increase(await vault.timelockDelay());
  await vault.setTimings(timings);
}

/** Hardhat's default accounts: tests sign as any of them without a round trip to the node. */
const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk";
const HARDHAT_ACCOUNTS = 20;
let signingKeys: Map<string, SigningKey> | undefined;

/** The signing key of a Hardhat default account, or undefined for any other address. */
export function signingKeyOf(address: string): SigningKey | undefined {
  if (signingKeys === undefined) {
    signingKeys = new Map();
    const root = HDNodeWallet.fromPhrase(HARDHAT_MNEMONIC, undefined, "m/44'/60'/0'/0");
    for (let i = 0; i < HARDHAT_ACCOUNTS; i++) {
      const wallet = root.deriveChild(i);
      signingKeys.set(wallet.address.toLowerCase(), wallet.signingKey);
    }
  }
  return signingKeys.get(address.toLowerCase());
}

/** The Vault's EIP-712 domain (name and version are the Vault's constants). */
export function vaultDomain(chainId: BigNumberish, vault: string) {
  return { name: "Surety", version: "1", chainId: toBigInt(chainId), verifyingContract: vault };
}

/**
 * The payer's signature of a V2 guarantee (the fields as signed, policy included) under the Vault's domain,
 * signed with `key` (default: the Hardhat account of `user`). "0x" when no key is known.
 */
export function payerSignature(
  input: Omit<V2Input, "policy"> & { policy: PolicyFields },
  scheme: SigningScheme = "eip712",
  key: SigningKey | undefined = signingKeyOf(input.user),
): string {
  if (key === undefined) return "0x";
  const hasher = new GuaranteeHasher(vaultDomain(input.chainId, input.vault));
  const hash = hasher.signedHash(
    {
      version: 2,
      user: input.user,
      recipient: input.recipient,
      reqId: input.reqId,
      amount: input.amount,
      asset: input.asset,
      timestamp: Number(input.timestamp ?? DEFAULT_TIMESTAMP),
      policy: { ...input.policy, deadline: Number(input.policy.deadline) },
    },
    scheme,
  );
  return key.sign(hash).serialized;
}

const DEFAULT_TIMESTAMP = 1_700_000_000n;

/**
 * A V2 certificate as Core would issue it: claims, their fields, id, request hash, signature, and the
 * payer's EIP-712 signature over the guarantee (over the signed fields after `overrides`).
 */
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
    timestamp: input.timestamp ?? DEFAULT_TIMESTAMP,
    policy: encodePolicy(input.policy),
    ...overrides,
  };
  const claims = encodeClaims(fields);
  const payerSignatureHex = payerSignature({ ...input, ...fields, policy: input.policy });
  return {
    claims,
    fields,
    guaranteeId: fields.guaranteeId,
    requestHash: validationRequestHash(input.chainId, input.policy, id),
    signature: signClaims(claims, key),
    payerScheme: SIGNING_SCHEME_CODES.eip712,
    payerSignature: payerSignatureHex,
  };
}

// ------------------------------------------------------------------------------- signed guarantees

/** A guarantee the payer signed, with what the guarantees root and a challenge answer need. */
export interface SignedTestGuarantee {
  payable: PayableGuarantee;
  /** Certificate claims bytes (CertificateCodec encoding). */
  claims: string;
  scheme: SigningScheme;
  signature: string;
}

/** A V1 guarantee signed by `payer` (EIP-712 by default) for the deployment of `f`. */
export async function signedGuarantee(
  f: { chainId: bigint; vaultAddress: string },
  payer: Signer & { address: string },
  recipient: string,
  reqId: bigint,
  amount: bigint,
  asset: string = ETH,
  scheme: SigningScheme = "eip712",
): Promise<SignedTestGuarantee> {
  const claims: GuaranteeClaimsV1 = {
    version: 1,
    user: payer.address,
    recipient,
    reqId,
    amount,
    asset,
    timestamp: 1_700_000_000,
  };
  const deployment = { chainId: f.chainId, vault: f.vaultAddress };
  const domain = { name: "Surety", version: "1", chainId: f.chainId, verifyingContract: f.vaultAddress };
  const signature = await signGuarantee(payer, domain, claims, scheme);
  return {
    payable: {
      guaranteeId: sdkGuaranteeId(deployment, payer.address, reqId),
      version: 1,
      user: payer.address,
      recipient,
      asset,
      amount,
      signature,
    },
    claims: encodeCertificateClaims(claims, deployment),
    scheme,
    signature,
  };
}

/** Core's plan (netting, both trees, commit arguments) for a cycle of signed guarantees. */
export function planCycle(cycleId: bigint, guarantees: readonly SignedTestGuarantee[]) {
  const payable = guarantees.map((g) => g.payable);
  const plan = buildCommitPlan(netCycle(cycleId, payable), payable);
  if (!plan) throw new Error("empty cycle");
  return plan;
}

/** A dispute answer's node and path type (IClearingHouse.DisputeAnswer). */
export type DisputeAnswerArg = Exclude<Parameters<ClearingHouse["answerDispute"]>[4], Typed>;

/**
 * `answerDispute`'s `answer` argument for `position` of `debtor`'s tree in `asset` among `guarantees` (the
 * cycle's, as planned): the summary and its proof, the position's node and path, and the guarantee there
 * with Core's certificate (signed with `key`), or empty claims with `concede`.
 */
export function disputeAnswerOf(
  guarantees: readonly SignedTestGuarantee[],
  debtor: string,
  position: number,
  options: {
    asset?: string;
    concede?: boolean;
    key?: BlsKeyPair;
    guarantee?: SignedTestGuarantee;
    /** The payer's `Finalization` signature (a payer-finalized V2 guarantee). */
    finalization?: string;
  } = {},
): DisputeAnswerArg {
  const asset = options.asset ?? ETH;
  const leaves = guarantees.map((g) => guaranteeLeafOf(g.payable));
  const trees = buildDebitTrees(leaves);
  const tree = buildDebtorTree(leaves, debtor, asset);
  if (tree === null) throw new Error(`${debtor} has no outgoing guarantee`);
  const base = {
    summary: summaryStruct(tree.summary),
    summaryProof: debitSummaryProof(trees.tree, tree.summary),
  };
  const empty = {
    claims: "0x",
    certificate: ZERO_G1,
    scheme: 0,
    signature: "0x",
    finalization: "0x",
    credit: NO_CREDIT_PROOF,
  };
  if (position >= tree.levels[0].length)
    return { ...base, leaf: { hash: ZeroHash, sum: 0n }, path: [], ...empty };
  const proof = sumTreeProof(tree, position);
  const at = { ...base, leaf: proof.leaf, path: proof.path };
  const leaf = tree.leaves[position];
  const g =
    options.guarantee ??
    guarantees.find(
      (x) => leaf !== undefined && x.payable.guaranteeId.toLowerCase() === leaf.guaranteeId.toLowerCase(),
    );
  if (options.concede || g === undefined) return { ...at, ...empty };
  const recipient = buildDebtorTree(leaves, g.payable.recipient, asset);
  const credit =
    (recipient && creditProofOfGuarantee(trees, recipient, g.payable.guaranteeId)) ?? NO_CREDIT_PROOF;
  return {
    ...at,
    claims: g.claims,
    certificate: signClaims(g.claims, options.key),
    scheme: SIGNING_SCHEME_CODES[g.scheme],
    signature: g.signature,
    finalization: options.finalization ?? "0x",
    credit,
  };
}

/** The position of guarantee `g` in its payer's tree (ordered by id). */
export function positionOf(guarantees: readonly SignedTestGuarantee[], g: SignedTestGuarantee): number {
  const tree = buildDebtorTree(
    guarantees.map((x) => guaranteeLeafOf(x.payable)),
    g.payable.user,
    g.payable.asset,
  );
  const index = tree?.leaves.findIndex(
    (l) => l.guaranteeId.toLowerCase() === g.payable.guaranteeId.toLowerCase(),
  );
  if (index === undefined || index < 0) throw new Error("not in its payer's tree");
  return index;
}

const ZERO_G1 = { x_a: ZeroHash, x_b: ZeroHash, y_a: ZeroHash, y_b: ZeroHash };

/** Commits Core's plan of `guarantees` as cycle `cycleId` with the operator key; `netted` as the V2 ids. */
export async function commitPlanned(
  f: { clearingHouse: ClearingHouse; operator: Signer },
  cycleId: bigint,
  guarantees: SignedTestGuarantee[],
  netted: string[] = [],
) {
  const plan = planCycle(cycleId, guarantees);
  const roots = {
    root: plan.root,
    guaranteesRoot: plan.args.guaranteesRoot,
    debitsRoot: plan.args.debitsRoot,
  };
  const tx = f.clearingHouse
    .connect(f.operator)
    .commitCycle(cycleId, roots, plan.args.totals, plan.args.debtors, netted);
  await (await tx).wait();
  return { plan, tx };
}

/**
 * `participant`'s net credit in a planned cycle: its summary under the `debitsRoot` and the proof
 * (`claimNetCredit(cycleId, asset, participant, summary, proof)`), and the credit it pays; throws if none.
 */
export function creditProofOf(plan: ReturnType<typeof planCycle>, participant: string, asset: string = ETH) {
  const s = plan.debitTrees.summaries.find(
    (x) =>
      x.debtor.toLowerCase() === participant.toLowerCase() &&
      x.asset.toLowerCase() === asset.toLowerCase() &&
      x.inTotal > x.total,
  );
  if (!s) throw new Error("no credit");
  return {
    credit: s.inTotal - s.total,
    summary: summaryStruct(s),
    proof: debitSummaryProof(plan.debitTrees.tree, s),
  };
}

/** Where `leaf` sits in its recipient's incoming tree of a planned cycle (`Vault.releaseListedReserve`). */
export function listedCreditProof(plan: ReturnType<typeof planCycle>, leaf: GuaranteeLeaf) {
  const leaves: GuaranteeLeaf[] = [...plan.guaranteeTree.entries()].map(([, v]) => ({
    guaranteeId: v[0],
    payer: v[1],
    recipient: v[2],
    asset: v[3],
    amount: BigInt(v[4]),
    signatureHash: v[5],
  }));
  const recipient = buildDebtorTree(leaves, leaf.recipient, leaf.asset);
  const proof = recipient && creditProofOfGuarantee(plan.debitTrees, recipient, leaf.guaranteeId);
  if (!proof) throw new Error("not credited");
  return proof;
}

/** {@link validatedV2Fixture}'s certificate (alice → bob, 2 ETH) as a guarantee Core would net. */
export function validatedV2Guarantee(f: Awaited<ReturnType<typeof validatedV2Fixture>>): SignedTestGuarantee {
  return {
    payable: {
      guaranteeId: f.cert.guaranteeId,
      version: 2,
      user: f.alice.address,
      recipient: f.bob.address,
      asset: ETH,
      amount: 2n * 10n ** 18n,
      signature: f.cert.payerSignature,
    },
    claims: f.cert.claims,
    scheme: "eip712",
    signature: f.cert.payerSignature,
  };
}

/** `Vault.remunerate`'s argument list for a test certificate (optionally with another payer signature). */
export function remunerateArgs(
  cert: {
    claims: string;
    signature: ReturnType<typeof signClaims>;
    payerScheme: 0 | 1;
    payerSignature: string;
  },
  payer: { scheme: 0 | 1; signature: string } = { scheme: cert.payerScheme, signature: cert.payerSignature },
): [string, ReturnType<typeof signClaims>, 0 | 1, string] {
  return [cert.claims, cert.signature, payer.scheme, payer.signature];
}

/**
 * alice → bob 2 ETH, a V2 guarantee (reqId 78) with the standard policy (deadline an hour from now) and no verdict
 * (bob never asked the validator): its certificate and the guarantee as a cycle lists it.
 */
export async function unvalidatedV2(f: Awaited<ReturnType<typeof suretyFixture>>) {
  const amount = 2n * 10n ** 18n;
  const cert = v2Certificate({
    chainId: f.chainId,
    vault: f.vaultAddress,
    user: f.alice.address,
    recipient: f.bob.address,
    reqId: 78n,
    amount,
    asset: ETH,
    policy: {
      registry: f.registryAddress,
      validator: f.validator.address,
      agentId: 3n,
      minScore: 50,
      jobHash: hashText("job"),
      tag: "ok",
      deadline: BigInt((await time.latest()) + 3600),
    },
  });
  const g: SignedTestGuarantee = {
    payable: {
      guaranteeId: cert.guaranteeId,
      version: 2,
      user: f.alice.address,
      recipient: f.bob.address,
      asset: ETH,
      amount,
      signature: cert.payerSignature,
    },
    claims: cert.claims,
    scheme: "eip712",
    signature: cert.payerSignature,
  };
  return { cert, g };
}

/**
 * The fixture with alice holding 10 ETH and a V2 certificate (alice pays bob 2 ETH, req 77, agent 3)
 * whose validation bob requested and the validator passed (score 90): ready for `remunerate` or a commit.
 */
export async function validatedV2Fixture() {
  const f = await suretyFixture();
  await f.vault.connect(f.alice).deposit({ value: 10n * 10n ** 18n });
  const cert = v2Certificate({
    chainId: f.chainId,
    vault: f.vaultAddress,
    user: f.alice.address,
    recipient: f.bob.address,
    reqId: 77n,
    amount: 2n * 10n ** 18n,
    asset: ETH,
    policy: {
      registry: f.registryAddress,
      validator: f.validator.address,
      agentId: 3n,
      minScore: 50,
      jobHash: hashText("job"),
      tag: "ok",
      deadline: BigInt((await time.latest()) + 3600),
    },
  });
  await f.validationRegistry.connect(f.bob).validationRequest(f.validator.address, 3n, "", cert.requestHash);
  await f.validationRegistry
    .connect(f.validator)
    .validationResponse(cert.requestHash, 90, "", hashText("e"), "ok");
  return { ...f, cert };
}
