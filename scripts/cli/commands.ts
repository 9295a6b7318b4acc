/**
 * The CLI commands. Each validates its flags first (a CliError naming the
 * flag), then talks to the chain and/or Core, and prints what it did.
 * Progress goes to stderr; a command's result (e.g. a signed request) goes to stdout.
 */
import { readFileSync } from "node:fs";
import type { ContractTransactionResponse, Interface } from "ethers";
import { domainFromPublicParams, randomReqId } from "../../sdk/kits/x402-scheme";
import {
  decodeCertificateClaims,
  parseCertificate,
  remunerateCallArgs,
  toRemunerateArgs,
} from "../../sdk/certificate";
import {
  type GuaranteeClaims,
  type SigningScheme,
  parseSigningScheme,
  parseValidationPolicy,
  toWireSignedGuarantee,
} from "../../sdk/claims";
import { signGuarantee } from "../../sdk/eip712";
import { parseAddress, parseUint256, sameAddress, ZERO_ADDRESS } from "../../sdk/wire";
import { ClearingHouse__factory, Vault__factory } from "../../typechain-types";
import { CoreHttp, SignedInReader } from "./core";
import { type AssetInfo, type CliContext, CliError, formatAmount, parseAmount } from "./context";

export type Flags = Record<string, string | boolean | undefined>;

function str(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") throw new CliError(`--${name}: needs a value`);
  return value;
}

function required(flags: Flags, name: string): string {
  const value = str(flags, name);
  if (value === undefined) throw new CliError(`--${name} is required`);
  return value;
}

function info(message: string): void {
  process.stderr.write(message + "\n");
}

const CUSTOM_ERROR_SOURCES: Interface[] = [
  Vault__factory.createInterface(),
  ClearingHouse__factory.createInterface(),
];

/** A reverted call as `Vault: ErrorName(args)` when the revert data decodes, else ethers' short message. */
function explain(error: unknown): string {
  const data =
    (error as { data?: unknown }).data ??
    (error as { info?: { error?: { data?: unknown } } }).info?.error?.data;
  if (typeof data === "string" && data.length >= 10) {
    for (const iface of CUSTOM_ERROR_SOURCES) {
      try {
        const parsed = iface.parseError(data);
        if (parsed) return `reverted with ${parsed.name}(${parsed.args.map(String).join(", ")})`;
      } catch {
        // not this contract's error
      }
    }
  }
  return (error as { shortMessage?: string }).shortMessage ?? (error as Error).message;
}

async function send(what: string, run: () => Promise<ContractTransactionResponse>): Promise<void> {
  let tx: ContractTransactionResponse;
  try {
    tx = await run();
  } catch (error) {
    throw new CliError(`${what}: ${explain(error)}`);
  }
  const receipt = await tx.wait();
  info(`${what}: tx ${tx.hash} (block ${receipt?.blockNumber}, gas ${receipt?.gasUsed})`);
}

async function ensureAllowance(
  ctx: CliContext,
  asset: AssetInfo,
  spender: string,
  amount: bigint,
): Promise<void> {
  const token = ctx.token(asset);
  const allowance = await token.allowance(ctx.address, spender);
  if (allowance >= amount) return;
  await send(`approve ${formatAmount(amount, asset)} to ${spender}`, () => token.approve(spender, amount));
}

export async function deposit(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const amount = parseAmount(str(flags, "amount"), asset, flags["base-units"] === true);
  const vault = ctx.vault.connect(ctx.wallet);
  if (asset.address === ZERO_ADDRESS) {
    await send(`deposit ${formatAmount(amount, asset)}`, () => vault.deposit({ value: amount }));
  } else {
    await ensureAllowance(ctx, asset, await vault.getAddress(), amount);
    await send(`deposit ${formatAmount(amount, asset)}`, () => vault.depositToken(asset.address, amount));
  }
  const balance = await ctx.vault.balanceOf(ctx.address, asset.address);
  console.log(`Vault balance of ${ctx.address}: ${formatAmount(balance, asset)}`);
}

export async function balance(ctx: CliContext, flags: Flags): Promise<void> {
  // Core's view is read as the other signed-in commands read: the stored session (`login`), else the key.
  let reader: SignedInReader | null = null;
  try {
    reader = SignedInReader.open(ctx);
  } catch (error) {
    if (!(error instanceof CliError) || ctx.hasKey) throw error; // a key that does not load is reported
  }
  const given = str(flags, "address");
  if (given === undefined && reader === null) {
    throw new CliError(
      `balance: whose? pass --address 0x…, a key (--account i, --key-file f), or sign in first ` +
        `(npm run cli -- login …; session file ${ctx.sessionFile})`,
    );
  }
  const user = given !== undefined ? parseAddress(given, "--address") : reader!.address;
  const assets = str(flags, "asset") ? [ctx.asset(str(flags, "asset"))] : ctx.assets();
  console.log(`On chain (Vault ${await ctx.vault.getAddress()}), ${user}:`);
  for (const asset of assets) {
    const [wallet, deposited, obligations, free, pending, finalizableAt] = await Promise.all([
      asset.address === ZERO_ADDRESS ? ctx.provider.getBalance(user) : ctx.tokenView(asset).balanceOf(user),
      ctx.vault.balanceOf(user, asset.address),
      ctx.vault.obligationOf(user, asset.address),
      ctx.vault.freeCollateralOf(user, asset.address),
      ctx.vault.pendingWithdrawal(user, asset.address),
      ctx.vault.withdrawalFinalizableAt(user, asset.address),
    ]);
    console.log(`  ${asset.symbol} (${asset.address})`);
    console.log(`    wallet              ${formatAmount(wallet, asset)}`);
    console.log(`    deposited           ${formatAmount(deposited, asset)}`);
    console.log(`    obligations         ${formatAmount(obligations, asset)}`);
    console.log(`    free collateral     ${formatAmount(free, asset)}`);
    const payout = await ctx.clearingHouse.payoutOf(asset.address, user);
    if (payout !== 0n) {
      console.log(
        `    ClearingHouse payout ${formatAmount(payout, asset)} (withdraw-payout --asset ${asset.symbol})`,
      );
    }
    if (pending.id !== 0n) {
      const at = new Date(Number(finalizableAt) * 1000).toISOString();
      console.log(
        `    pending withdrawal  #${pending.id}: ${formatAmount(pending.amount, asset)}, finalizable at ${at}`,
      );
    }
  }
  if (reader === null || !sameAddress(user, reader.address)) {
    console.log(
      `Core's view: only ${user} itself (or a facilitator) may read it: sign in as ${user} ` +
        "(npm run cli -- login …) or pass its key; skipped.",
    );
    return;
  }
  let answer;
  try {
    answer = await reader.get(`/core/users/${user}/balances`);
  } catch (error) {
    if (error instanceof CliError) throw error; // the stored session is dead and there is no key: sign in again
    console.log(`Core's view (${ctx.coreUrl}): unavailable: ${(error as Error).message}`);
    return;
  }
  if (answer.status !== 200) {
    console.log(`Core's view (${ctx.coreUrl}): ${answer.status} ${JSON.stringify(answer.body)}`);
    return;
  }
  console.log(`Core's view (${ctx.coreUrl}):`);
  const body = answer.body as { balances: Record<string, string | number>[] };
  for (const row of body.balances) {
    if (assets.length === 1 && !sameAddress(String(row.asset_address), assets[0].address)) continue;
    const { symbol, deposited, locked, pending_withdrawal, available, collateral_factor_bps } = row;
    console.log(
      `  ${String(symbol).padEnd(6)} deposited ${deposited}, locked ${locked}, pending withdrawal ${pending_withdrawal}, ` +
        `available ${available} (base units; collateral factor ${Number(collateral_factor_bps) / 100} %)`,
    );
  }
}

export async function requestWithdrawal(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const amount = parseAmount(str(flags, "amount"), asset, flags["base-units"] === true);
  const vault = ctx.vault.connect(ctx.wallet);
  await send(`request withdrawal of ${formatAmount(amount, asset)}`, () =>
    vault.requestWithdrawal(asset.address, amount),
  );
  const at = await ctx.vault.withdrawalFinalizableAt(ctx.address, asset.address);
  console.log(
    `Withdrawal requested; finalize after ${new Date(Number(at) * 1000).toISOString()}: ` +
      `npm run cli -- finalize-withdrawal --asset ${asset.symbol}`,
  );
}

export async function finalizeWithdrawal(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const at = await ctx.vault.withdrawalFinalizableAt(ctx.address, asset.address);
  if (at === 0n) throw new CliError(`no open withdrawal of ${asset.symbol} for ${ctx.address}`);
  const latest = await ctx.provider.getBlock("latest");
  const now = BigInt(latest?.timestamp ?? 0);
  if (now < at) {
    throw new CliError(
      `the withdrawal is finalizable at ${new Date(Number(at) * 1000).toISOString()} (in ${at - now} s of chain time)`,
    );
  }
  const before = await ctx.vault.balanceOf(ctx.address, asset.address);
  await send(`finalize withdrawal of ${asset.symbol}`, () =>
    ctx.vault.connect(ctx.wallet).finalizeWithdrawal(asset.address),
  );
  const after = await ctx.vault.balanceOf(ctx.address, asset.address);
  console.log(
    `Paid out ${formatAmount(before - after, asset)}; Vault balance now ${formatAmount(after, asset)}`,
  );
}

export async function signGuaranteeCommand(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const recipient = parseAddress(required(flags, "to"), "--to");
  const amount = parseAmount(str(flags, "amount"), asset, flags["base-units"] === true);
  const scheme: SigningScheme = parseSigningScheme(str(flags, "scheme") ?? "eip712", "--scheme");
  const reqId = str(flags, "req-id") ? parseUint256(str(flags, "req-id"), "--req-id") : randomReqId();
  const timestampFlag = str(flags, "timestamp");
  const timestamp = timestampFlag === undefined ? Math.floor(Date.now() / 1000) : Number(timestampFlag);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new CliError("--timestamp: must be unix seconds");
  const policyFlag = str(flags, "policy");
  const base = { user: ctx.address, recipient, reqId, amount, asset: asset.address, timestamp };
  let claims: GuaranteeClaims;
  if (policyFlag === undefined) {
    claims = { version: 1, ...base } as GuaranteeClaims;
  } else {
    let raw: unknown;
    try {
      raw = JSON.parse(policyFlag.trim().startsWith("{") ? policyFlag : readFileSync(policyFlag, "utf8"));
    } catch (error) {
      throw new CliError(`--policy: not a JSON object or a readable JSON file: ${(error as Error).message}`);
    }
    claims = { version: 2, ...base, policy: parseValidationPolicy(raw, "--policy") } as GuaranteeClaims;
  }
  const core = new CoreHttp(ctx.coreUrl);
  const domain = domainFromPublicParams(await core.get("/core/public-params"));
  if (
    domain.chainId !== BigInt(ctx.deployment.chainId) ||
    !sameAddress(domain.verifyingContract, ctx.deployment.contracts.Vault.address)
  ) {
    throw new CliError(
      `Core at ${ctx.coreUrl} serves chain ${domain.chainId} / Vault ${domain.verifyingContract}, ` +
        `not the deployment's chain ${ctx.deployment.chainId} / Vault ${ctx.deployment.contracts.Vault.address}`,
    );
  }
  const signature = await signGuarantee(ctx.wallet, domain, claims, scheme);
  info(
    `signed ${scheme} guarantee v${claims.version}: ${formatAmount(amount, asset)} from ${ctx.address} to ${recipient}`,
  );
  console.log(JSON.stringify(toWireSignedGuarantee({ claims, signature, scheme }), null, 2));
}

/** `ClearingHouse.DebtStatus` by value (docs/clearing.md, "Debt status"). */
const DEBT_STATUS = [
  "none",
  "open",
  "paid",
  "covered",
  "challenged",
  "answered",
  "voided",
  "refunded",
] as const;
type DebtStatusName = (typeof DEBT_STATUS)[number];

/** `debtor`'s debt of the cycle and asset, its status named; a CliError unless the status is one of `wanted`. */
async function debtIn(
  ctx: CliContext,
  cycleId: bigint,
  asset: AssetInfo,
  debtor: string,
  wanted: readonly DebtStatusName[],
): Promise<{ amount: bigint; status: DebtStatusName }> {
  const debt = await ctx.clearingHouse.debtOf(cycleId, asset.address, debtor);
  const status = DEBT_STATUS[Number(debt.status)];
  if (status === undefined || !wanted.includes(status)) {
    throw new CliError(
      `${debtor} has no ${wanted.join(" or ")} ${asset.symbol} debit in cycle ${cycleId} ` +
        `(${status ?? `status ${debt.status}`})`,
    );
  }
  return { amount: debt.amount, status };
}

const isoTime = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString();

export async function payNetDebit(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const cycleId = parseUint256(required(flags, "cycle"), "--cycle");
  // An answered challenge makes the debit payable again, as an open one.
  const debt = await debtIn(ctx, cycleId, asset, ctx.address, ["open", "answered"]);
  const clearingHouse = ctx.clearingHouse.connect(ctx.wallet);
  if (asset.address === ZERO_ADDRESS) {
    await send(`pay net debit ${formatAmount(debt.amount, asset)} (cycle ${cycleId})`, () =>
      clearingHouse.payNetDebit(cycleId, asset.address, { value: debt.amount }),
    );
  } else {
    await ensureAllowance(ctx, asset, await clearingHouse.getAddress(), debt.amount);
    await send(`pay net debit ${formatAmount(debt.amount, asset)} (cycle ${cycleId})`, () =>
      clearingHouse.payNetDebit(cycleId, asset.address),
    );
  }
  console.log(`Paid the net debit of cycle ${cycleId}: ${formatAmount(debt.amount, asset)}`);
}

/**
 * The payer's side of the dispute game: dispute one position of your own tree of outgoing guarantees
 * (Core's `GET /core/cycles/{id}/debits/{payer}` lists them) inside the cycle's challenge window. Core must
 * prove that guarantee by the answer deadline or only its amount comes off your debit; a dispute left
 * unanswered lets anyone void the whole debit.
 */
export async function disputeGuarantee(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const cycleId = parseUint256(required(flags, "cycle"), "--cycle");
  const position = parsePosition(str(flags, "position") || "0");
  const debt = await debtIn(ctx, cycleId, asset, ctx.address, ["open", "challenged", "answered"]);
  await send(
    `dispute position ${position} of your debit ${formatAmount(debt.amount, asset)} (cycle ${cycleId})`,
    () => ctx.clearingHouse.connect(ctx.wallet).disputeGuarantee(cycleId, asset.address, position),
  );
  const cycle = await ctx.clearingHouse.getCycle(cycleId);
  console.log(
    `Disputed position ${position} of your net debit in cycle ${cycleId} (${formatAmount(debt.amount, asset)}). ` +
      `It cannot be paid or covered until answered; unanswered by ${isoTime(cycle.answerDeadline)} ` +
      `(answer deadline), anyone can void it: void-debit --cycle ${cycleId} --asset ${asset.symbol} ` +
      `--debtor ${ctx.address}`,
  );
}

/** A position of a debtor's sum tree: 0 to 2^24 − 1 (`SumTree.MAX_DEPTH`). */
function parsePosition(value: string): number {
  const n = /^[0-9]{1,8}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 0 && n < 2 ** 24)) throw new CliError(`--position: must be an integer from 0 to ${2 ** 24 - 1}`);
  return n;
}

/** Voids a net debit with a dispute left unanswered past the answer deadline (anyone may; default: your own). */
export async function voidDebit(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const cycleId = parseUint256(required(flags, "cycle"), "--cycle");
  const debtor = str(flags, "debtor") ? parseAddress(str(flags, "debtor"), "--debtor") : ctx.address;
  const debt = await debtIn(ctx, cycleId, asset, debtor, ["challenged"]);
  await send(`void unanswered debit ${formatAmount(debt.amount, asset)} (cycle ${cycleId})`, () =>
    ctx.clearingHouse.connect(ctx.wallet).voidUnansweredDebit(cycleId, asset.address, debtor),
  );
  console.log(
    `Voided the unanswered net debit of ${debtor} in cycle ${cycleId}: ${formatAmount(debt.amount, asset)} ` +
      `(obligation released; the creditors are funded from the operator bond)`,
  );
}

interface Position {
  credit: bigint;
  /** The participant's summary under the debitsRoot (sumRoot, total, depth, inRoot, inTotal, inDepth). */
  summary: string[];
  proof: string[];
}

/** The asset's position in Core's proof answer (`GET /core/cycles/{id}/participants/{address}/proof`). */
function positionFromProofAnswer(body: unknown, asset: AssetInfo): Position | null {
  const positions = (body as { positions?: unknown })?.positions;
  if (!Array.isArray(positions)) {
    throw new CliError(`Core's proof answer has no positions: ${JSON.stringify(body)}`);
  }
  for (const entry of positions as Record<string, unknown>[]) {
    const entryAsset = entry?.asset_address;
    if (typeof entryAsset !== "string" || !sameAddress(entryAsset, asset.address)) continue;
    const args = entry.claim_net_credit_args;
    const credit = parseUint256(entry.credit, "credit");
    if (credit === 0n || !Array.isArray(args)) return { credit: 0n, summary: [], proof: [] };
    const summary = args[3] as Record<string, unknown> | null;
    if (summary === null || typeof summary !== "object" || !Array.isArray(args[4]))
      throw new CliError(`Core's ${asset.symbol} position has no summary proof`);
    const fields = ["sumRoot", "total", "depth", "inRoot", "inTotal", "inDepth"];
    return { credit, summary: fields.map((k) => String(summary[k])), proof: args[4].map(String) };
  }
  return null;
}

/** The summary as `claimNetCredit` takes it. */
function summaryTuple(v: string[]) {
  return {
    sumRoot: v[0],
    total: BigInt(v[1]),
    depth: BigInt(v[2]),
    inRoot: v[3],
    inTotal: BigInt(v[4]),
    inDepth: BigInt(v[5]),
  };
}

/**
 * Claims a net credit (Core's proof, or --credit/--summary/--proof). The ClearingHouse sets it aside for the participant
 * (pull payment); when the caller is the participant, its whole payout in the asset is then withdrawn to
 * `--to` (default: itself). A credit claimed already (e.g. by Core's keeper) is not claimed again.
 */
export async function claimNetCredit(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const cycleId = parseUint256(required(flags, "cycle"), "--cycle");
  const participant = str(flags, "participant")
    ? parseAddress(str(flags, "participant"), "--participant")
    : ctx.address;
  const to = str(flags, "to") ? parseAddress(str(flags, "to"), "--to") : ctx.address;
  let position: Position | null;
  if (str(flags, "proof") !== undefined) {
    const proof = JSON.parse(required(flags, "proof")) as unknown;
    if (!Array.isArray(proof)) throw new CliError("--proof: must be a JSON array of 32-byte hex strings");
    const summary = JSON.parse(required(flags, "summary")) as unknown;
    if (!Array.isArray(summary) || summary.length !== 6)
      throw new CliError("--summary: must be a JSON array [sumRoot, total, depth, inRoot, inTotal, inDepth]");
    position = {
      credit: parseUint256(required(flags, "credit"), "--credit"),
      summary: summary.map(String),
      proof: proof.map(String),
    };
  } else {
    // A public endpoint: the proof is the same whoever asks (anyone may claim for the participant).
    const path = `/core/cycles/${cycleId}/participants/${participant}/proof`;
    position = positionFromProofAnswer(await new CoreHttp(ctx.coreUrl).get(path), asset);
  }
  if (position === null || position.credit === 0n) {
    throw new CliError(`${participant} has no ${asset.symbol} net credit in cycle ${cycleId}`);
  }
  const { credit, summary, proof } = position;
  if (await ctx.clearingHouse.isCreditClaimed(cycleId, asset.address, participant)) {
    info(`the ${asset.symbol} credit of ${participant} in cycle ${cycleId} was claimed already`);
  } else {
    await send(`claim net credit ${formatAmount(credit, asset)} (cycle ${cycleId})`, () =>
      ctx.clearingHouse
        .connect(ctx.wallet)
        .claimNetCredit(cycleId, asset.address, participant, summaryTuple(summary), proof),
    );
    console.log(`Claimed ${formatAmount(credit, asset)} for ${participant} from cycle ${cycleId}`);
  }
  if (!sameAddress(participant, ctx.address)) {
    console.log(
      `Set aside for ${participant} in the ClearingHouse: only ${participant} can withdraw it ` +
        `(withdraw-payout --asset ${asset.symbol})`,
    );
    return;
  }
  await withdrawPayoutTo(ctx, asset, to);
}

/** Withdraws everything the ClearingHouse set aside for the caller in the asset (credits, refunds) to `to`. */
async function withdrawPayoutTo(ctx: CliContext, asset: AssetInfo, to: string): Promise<void> {
  const payout = await ctx.clearingHouse.payoutOf(asset.address, ctx.address);
  const owed = await ctx.clearingHouse.refundOwed(asset.address, ctx.address);
  if (payout === 0n && owed === 0n) {
    throw new CliError(`nothing is set aside for ${ctx.address} in ${asset.symbol} in the ClearingHouse`);
  }
  await send(`withdraw payout ${formatAmount(payout, asset)} to ${to}`, () =>
    ctx.clearingHouse.connect(ctx.wallet).withdrawPayout(asset.address, to),
  );
  console.log(`Withdrew ${formatAmount(payout, asset)} from the ClearingHouse to ${to}`);
}

/** Withdraws the caller's ClearingHouse payout in one asset (claimed credits, refunds) to `--to` (default: itself). */
export async function withdrawPayout(ctx: CliContext, flags: Flags): Promise<void> {
  const asset = ctx.asset(str(flags, "asset"));
  const to = str(flags, "to") ? parseAddress(str(flags, "to"), "--to") : ctx.address;
  await withdrawPayoutTo(ctx, asset, to);
}

/**
 * A V2 certificate and the payer's signature it was issued for, as `Vault.remunerate` and
 * `Vault.registerReserve` take them, from `--certificate` (Core's guarantee view carries the payer's
 * `scheme` and `signature`; a settle answer or a bare certificate needs `--payer-signature`).
 */
function v2CallArgs(
  flags: Flags,
  what: string,
): { args: ReturnType<typeof remunerateCallArgs>; decoded: ReturnType<typeof decodeCertificateClaims> } {
  const source = required(flags, "certificate");
  let raw: unknown;
  try {
    raw = JSON.parse(source.trim().startsWith("{") ? source : readFileSync(source, "utf8"));
  } catch (error) {
    throw new CliError(
      `--certificate: not a JSON object or a readable JSON file: ${(error as Error).message}`,
    );
  }
  // A settle answer or a seller's stored record carries the certificate under `certificate`; Core's
  // guarantee view (`GET /core/guarantees/{id}`) also carries the payer's `scheme` and `signature`.
  const record = (raw ?? {}) as { certificate?: unknown; scheme?: unknown; signature?: unknown };
  const wire = record.certificate ?? raw;
  const certificate = parseCertificate(wire, "--certificate");
  const decoded = decodeCertificateClaims(certificate.claims);
  if (decoded.version !== 2)
    throw new CliError(`--certificate: only V2 certificates can be ${what} on the Vault`);
  const fromRecord = record.certificate !== undefined && typeof record.signature === "string";
  const payerSignature =
    str(flags, "payer-signature") ?? (fromRecord ? (record.signature as string) : undefined);
  if (payerSignature === undefined) {
    throw new CliError(
      "--payer-signature is required (the payer's signature the guarantee was issued for), unless " +
        "--certificate is Core's guarantee view, which carries it",
    );
  }
  const scheme = parseSigningScheme(
    str(flags, "scheme") ?? (fromRecord ? record.scheme : "eip712"),
    "--scheme",
  );
  try {
    return {
      args: remunerateCallArgs(toRemunerateArgs(certificate, { scheme, signature: payerSignature })),
      decoded,
    };
  } catch (error) {
    throw new CliError(`--payer-signature: ${(error as Error).message}`);
  }
}

export async function remunerate(ctx: CliContext, flags: Flags): Promise<void> {
  const { args, decoded } = v2CallArgs(flags, "remunerated");
  const { claims } = decoded;
  info(
    `remunerating guarantee ${decoded.guaranteeId}: ${claims.amount} base units of ${claims.asset} ` +
      `from ${claims.user} to ${claims.recipient}`,
  );
  await send("remunerate", () => ctx.vault.connect(ctx.wallet).remunerate(...args));
  console.log(`Remunerated guarantee ${decoded.guaranteeId}: ${claims.amount} paid to ${claims.recipient}`);
}

/** Registers the seller's reserve of a V2 guarantee (docs/contracts.md, "Seller's reserve"). */
export async function registerReserve(ctx: CliContext, flags: Flags): Promise<void> {
  const { args, decoded } = v2CallArgs(flags, "reserved");
  const { claims } = decoded;
  info(
    `reserving ${claims.amount} base units of ${claims.asset} of ${claims.user} for ${decoded.guaranteeId}`,
  );
  await send("registerReserve", () => ctx.vault.connect(ctx.wallet).registerReserve(...args));
  const reserve = await ctx.vault.reserveOf(decoded.guaranteeId);
  console.log(
    `Reserved guarantee ${decoded.guaranteeId}: ${claims.amount} of ${claims.user}'s collateral held until ` +
      `${new Date(Number(reserve.expiresAt) * 1000).toISOString()} unless remunerated or netted first`,
  );
}
