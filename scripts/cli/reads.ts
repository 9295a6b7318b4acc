/**
 * The CLI's sign-in and what it reads from Core (docs/operator-api.md): `login` / `logout` (SIWE, the
 * session file of ./session.ts), `guarantees` (a payer's or a recipient's list, Core's filters),
 * `guarantee <id>` (the view, its timeline, and the certificate checked here against the Vault's operator
 * key read from the chain, with the sdk), `cycles` (committed clearing cycles, public).
 */
import { formatUnits } from "ethers";
import { publicKeyFromEip2537 } from "../../sdk/bls";
import {
  certificateMatchesRequest,
  decodeCertificateClaims,
  parseCertificate,
  verifyCertificateSignature,
} from "../../sdk/certificate";
// The states a `--state` filter may name: Core's own list (docs/protocol.md, "Guarantee lifecycle").
import { GUARANTEE_STATES } from "../../sdk/guarantee-states";
import { type GuaranteeClaims, parseClaims } from "../../sdk/claims";
import { guaranteeId } from "../../sdk/ids";
import { parseAddress, parseBytes32, sameAddress } from "../../sdk/wire";
import type { Flags } from "./commands";
import { type CliContext, CliError } from "./context";
import { CoreHttp, SignedInReader } from "./core";
import { SessionStore } from "./session";

/** `GET /core/guarantees/{id}` as this CLI reads it (the fields it prints and checks). */
interface GuaranteeViewBody {
  guarantee_id: string;
  state: string;
  claims: unknown;
  scheme: string;
  certificate: unknown;
  created_at: string;
  updated_at: string;
  cycle_id: number | null;
  excluded_reason: string | null;
}

interface TimelineEntryBody {
  kind: string;
  at: string | null;
  clock: string;
  tx_hash: string | null;
  block_number: number | null;
  cycle_id: number | null;
  detail: Record<string, unknown>;
}

function str(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") throw new CliError(`--${name}: needs a value`);
  return value;
}

function integerFlag(flags: Flags, name: string, min: number, max: number): number | undefined {
  const value = str(flags, name);
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new CliError(`--${name}: must be an integer from ${min} to ${max}`);
  }
  return Number(value);
}

function json(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/** `amount` of `asset` as "1.5 tUSD (1500000 base units)" when the deployment knows the asset. */
function amountOf(ctx: CliContext, amount: string, asset: string): string {
  const known = ctx.assets().find((a) => sameAddress(a.address, asset));
  if (!known) return `${amount} base units of ${asset}`;
  return `${formatUnits(BigInt(amount), known.decimals)} ${known.symbol} (${amount} base units)`;
}

// ---------------------------------------------------------------------------------------------
// login, logout
// ---------------------------------------------------------------------------------------------

export async function login(ctx: CliContext): Promise<void> {
  const wallet = ctx.wallet; // a CliError naming the ways to give a key when none is
  const store = new SessionStore(ctx.sessionFile);
  const core = new CoreHttp(ctx.coreUrl);
  const previous = store.read(ctx.coreUrl);
  const session = await core.signIn(wallet);
  store.save(ctx.coreUrl, session);
  if (previous !== null) {
    // The session this one replaces would otherwise stay valid on Core until its refresh token expires.
    try {
      await core.logout(previous.refresh_token);
      console.log(`Revoked the previous session (${previous.address}) on ${ctx.coreUrl}.`);
    } catch (error) {
      console.log(
        `The previous session (${previous.address}) could not be revoked on ${ctx.coreUrl}: ` +
          `${(error as Error).message}; it lapses when its refresh token expires.`,
      );
    }
  }
  const minutes = Math.round((session.access_token_expires_at - Math.floor(Date.now() / 1000)) / 60);
  console.log(`Signed in to ${ctx.coreUrl} as ${session.address}.`);
  console.log(
    `Session stored in ${store.file} (mode 600): the access token lasts ${minutes} min and is refreshed ` +
      "as needed; guarantees and guarantee use it without the key.",
  );
}

export async function logout(ctx: CliContext): Promise<void> {
  const store = new SessionStore(ctx.sessionFile);
  const stored = store.read(ctx.coreUrl);
  if (stored === null) {
    console.log(`No session for ${ctx.coreUrl} in ${store.file}.`);
    return;
  }
  await new CoreHttp(ctx.coreUrl).logout(stored.refresh_token);
  store.remove(ctx.coreUrl);
  console.log(
    `Signed ${stored.address} out of ${ctx.coreUrl} (session revoked, removed from ${store.file}).`,
  );
}

// ---------------------------------------------------------------------------------------------
// guarantees, guarantee <id>
// ---------------------------------------------------------------------------------------------

export async function guarantees(ctx: CliContext, flags: Flags): Promise<void> {
  const role = str(flags, "as") ?? "payer";
  if (role !== "payer" && role !== "recipient") throw new CliError("--as: must be payer or recipient");
  const state = str(flags, "state");
  if (state !== undefined && !(GUARANTEE_STATES as readonly string[]).includes(state.toUpperCase())) {
    throw new CliError(`--state: must be one of ${GUARANTEE_STATES.join(", ")}`);
  }
  const limit = integerFlag(flags, "limit", 1, 500);
  const cursor = str(flags, "cursor");
  const asset = str(flags, "asset") === undefined ? undefined : ctx.asset(str(flags, "asset"));
  const reader = SignedInReader.open(ctx);
  const query = new URLSearchParams({ [role]: reader.address });
  if (state !== undefined) query.set("state", state.toUpperCase());
  if (asset !== undefined) query.set("asset", asset.address);
  if (limit !== undefined) query.set("limit", String(limit));
  if (cursor !== undefined) query.set("cursor", cursor);
  const page = (await reader.read(`/core/guarantees?${query}`)) as {
    guarantees: (GuaranteeViewBody & { claims: Record<string, unknown> })[];
    next_cursor: string | null;
  };
  if (flags.json === true) return json(page);
  const filters = [state && `state ${state.toUpperCase()}`, asset && `asset ${asset.symbol}`]
    .filter(Boolean)
    .join(", ");
  console.log(
    `Guarantees with ${reader.address} as ${role}${filters ? ` (${filters})` : ""}, newest first: ` +
      `${page.guarantees.length}${page.next_cursor ? " on this page" : ""}`,
  );
  for (const g of page.guarantees) {
    const c = g.claims;
    const other = role === "payer" ? `to ${String(c.recipient_address)}` : `from ${String(c.user_address)}`;
    const cycle = g.cycle_id === null ? "" : `, cycle ${g.cycle_id}`;
    console.log(`  ${g.guarantee_id}  ${g.state.padEnd(19)} v${String(c.version)}  ${g.created_at}`);
    console.log(
      `      ${amountOf(ctx, String(c.amount), String(c.asset_address))} ${other}, req_id ${String(c.req_id)}${cycle}`,
    );
  }
  if (page.next_cursor) console.log(`More: the same command with --cursor ${page.next_cursor}`);
}

/** The outcome of checking a guarantee's certificate locally (sdk), each line a finding. */
export interface CertificateCheck {
  ok: boolean;
  lines: string[];
}

/**
 * Checks `view.certificate` here: its BLS signature against `operatorKey` (the Vault's, read from the
 * chain), and that the signed claims are this guarantee's, bound to this deployment (chain id, Vault, id).
 */
export function checkGuaranteeCertificate(
  view: GuaranteeViewBody,
  operatorKey: Uint8Array,
  deployment: { chainId: number; vault: string },
): CertificateCheck {
  let claims: GuaranteeClaims;
  let certificate;
  let decoded;
  try {
    claims = parseClaims(view.claims);
    certificate = parseCertificate(view.certificate);
    decoded = decodeCertificateClaims(certificate.claims);
  } catch (error) {
    return { ok: false, lines: [`malformed: ${(error as Error).message}`] };
  }
  const signed = verifyCertificateSignature(operatorKey, certificate);
  const expectedId = guaranteeId(deployment, claims.user, claims.reqId);
  const idMatches = decoded.guaranteeId === expectedId && view.guarantee_id.toLowerCase() === expectedId;
  const bound = certificateMatchesRequest(decoded, claims, deployment);
  const lines = [
    signed
      ? "BLS signature valid against the Vault's operator key"
      : "BLS signature INVALID against the Vault's operator key: do not rely on this certificate",
    bound && idMatches
      ? `signed claims are this guarantee's (id, payer, recipient, req_id, amount, asset, timestamp${claims.version === 2 ? ", policy" : ""}), ` +
        `bound to chain ${deployment.chainId} and Vault ${deployment.vault}`
      : !idMatches
        ? `the certificate's guarantee id ${decoded.guaranteeId} is not ${view.guarantee_id} (expected ${expectedId})`
        : "the signed claims differ from the guarantee Core shows, or are bound to another chain or Vault",
  ];
  return { ok: signed && bound && idMatches, lines };
}

export async function guarantee(ctx: CliContext, flags: Flags): Promise<void> {
  const raw = str(flags, "id");
  if (raw === undefined) throw new CliError("a guarantee id is required: guarantee <id>");
  const id = parseBytes32(raw, "id").toLowerCase();
  const reader = SignedInReader.open(ctx);
  const found = await reader.get(`/core/guarantees/${id}`);
  if (found.status === 404) {
    throw new CliError(
      `guarantee ${id} not found, or not visible to ${reader.address} (only its payer, its recipient, ` +
        "facilitators and admin wallets see it)",
    );
  }
  if (found.status !== 200) {
    await reader.read(`/core/guarantees/${id}`); // the same answer, as a CliError naming it
  }
  const view = found.body as GuaranteeViewBody;
  const timeline = (await reader.read(`/core/guarantees/${id}/timeline`)) as {
    timeline: TimelineEntryBody[];
  };
  const vault = parseAddress(ctx.deployment.contracts.Vault.address, "contracts.Vault.address");
  let operatorKey: Uint8Array;
  try {
    if (!(await ctx.vault.operatorKeySet())) throw new Error("no operator key is set");
    operatorKey = publicKeyFromEip2537(await ctx.vault.operatorKey(), "Vault.operatorKey()");
  } catch (error) {
    throw new CliError(`cannot read the operator key of the Vault at ${vault}: ${(error as Error).message}`);
  }
  const check = checkGuaranteeCertificate(view, operatorKey, { chainId: ctx.deployment.chainId, vault });
  if (flags.json === true) {
    json({ guarantee: view, timeline: timeline.timeline, certificate_check: check });
  } else {
    printGuarantee(ctx, view, timeline.timeline, check, operatorKey);
  }
  if (!check.ok)
    throw new CliError(`the certificate of guarantee ${id} failed the check: ${check.lines.join("; ")}`);
}

function printGuarantee(
  ctx: CliContext,
  view: GuaranteeViewBody,
  timeline: TimelineEntryBody[],
  check: CertificateCheck,
  operatorKey: Uint8Array,
): void {
  const c = view.claims as Record<string, unknown>;
  const row = (name: string, value: string) => console.log(`  ${name.padEnd(12)} ${value}`);
  console.log(`Guarantee ${view.guarantee_id}`);
  row("state", `${view.state} (since ${view.updated_at})`);
  row("version", `${String(c.version)} (signed ${view.scheme})`);
  row("payer", String(c.user_address));
  row("recipient", String(c.recipient_address));
  row("amount", amountOf(ctx, String(c.amount), String(c.asset_address)));
  row("req_id", String(c.req_id));
  row("timestamp", `${String(c.timestamp)} (${new Date(Number(c.timestamp) * 1000).toISOString()})`);
  const policy = c.validation_policy as Record<string, unknown> | null | undefined;
  if (policy) {
    row(
      "policy",
      `validator ${String(policy.validator_address)} (agent ${String(policy.validator_agent_id)}) on ` +
        `${String(policy.validation_registry_address)}, min score ${String(policy.min_validation_score)}, ` +
        `tag ${JSON.stringify(policy.required_validation_tag)}, deadline ${String(policy.validation_deadline)}`,
    );
  }
  row("issued", view.created_at);
  row("cycle", view.cycle_id === null ? "none yet" : String(view.cycle_id));
  if (view.excluded_reason) row("excluded", view.excluded_reason);
  console.log("Timeline (oldest first):");
  for (const step of timeline) {
    const where = [
      step.cycle_id === null ? null : `cycle ${step.cycle_id}`,
      step.tx_hash === null ? null : `tx ${step.tx_hash}`,
      step.block_number === null ? null : `block ${step.block_number}`,
    ].filter(Boolean);
    const detail = Object.keys(step.detail).length === 0 ? "" : ` ${JSON.stringify(step.detail)}`;
    console.log(
      `  ${(step.at ?? "(time not kept)").padEnd(24)} ${step.clock.padEnd(5)} ${step.kind}${where.length ? ` (${where.join(", ")})` : ""}${detail}`,
    );
  }
  console.log(
    `Certificate (checked here; Vault operator key 0x${Buffer.from(operatorKey).toString("hex")}):`,
  );
  for (const line of check.lines) console.log(`  ${check.ok ? "ok" : "!!"} ${line}`);
}

// ---------------------------------------------------------------------------------------------
// cycles
// ---------------------------------------------------------------------------------------------

interface CycleBody {
  cycle_id: number;
  state: string;
  planned_by_core: boolean;
  committed_at: string | null;
  commit_tx: string | null;
  challenge_deadline: string | null;
  payment_deadline: string | null;
  guarantee_count: number;
  totals: { asset_address: string; total_debit: string }[];
  debtors: { asset_address: string; debtor: string; amount: string; status: string }[];
  claims: { asset_address: string; participant: string; amount: string }[];
}

export async function cycles(ctx: CliContext, flags: Flags): Promise<void> {
  const limit = integerFlag(flags, "limit", 1, 50);
  const before = integerFlag(flags, "before", 1, Number.MAX_SAFE_INTEGER);
  const query = new URLSearchParams();
  if (limit !== undefined) query.set("limit", String(limit));
  if (before !== undefined) query.set("before", String(before));
  const page = (await new CoreHttp(ctx.coreUrl).get(`/core/cycles${query.size ? `?${query}` : ""}`)) as {
    cycles: CycleBody[];
    next_cursor: number | string | null;
  };
  if (flags.json === true) return json(page);
  // Whose positions to point out: the key's wallet, else nobody (the list itself is public).
  const me = ctx.hasKey ? ctx.address : null;
  if (page.cycles.length === 0) console.log(`No committed cycle at ${ctx.coreUrl} yet.`);
  else console.log(`Committed cycles at ${ctx.coreUrl}, newest first:`);
  for (const cycle of page.cycles) {
    const core = cycle.planned_by_core ? "" : " NOT PLANNED BY CORE";
    const plural = cycle.guarantee_count === 1 ? "" : "s";
    console.log(
      `  #${cycle.cycle_id} ${cycle.state}${core}: ${cycle.guarantee_count} guarantee${plural}, committed ${cycle.committed_at ?? "?"}` +
        `${cycle.commit_tx ? ` (tx ${cycle.commit_tx})` : ""}`,
    );
    console.log(
      `      challenge until ${cycle.challenge_deadline ?? "?"}, payment due ${cycle.payment_deadline ?? "?"}`,
    );
    for (const total of cycle.totals) {
      const debtors = cycle.debtors.filter((d) => sameAddress(d.asset_address, total.asset_address));
      const open = debtors.filter(
        (d) => d.status === "OPEN" || d.status === "CHALLENGED" || d.status === "ANSWERED",
      );
      console.log(
        `      ${amountOf(ctx, total.total_debit, total.asset_address)} netted; ${debtors.length} debtor${debtors.length === 1 ? "" : "s"} (${open.length} unresolved)`,
      );
    }
    if (me !== null) {
      for (const d of cycle.debtors.filter((x) => sameAddress(x.debtor, me))) {
        console.log(`      you owe ${amountOf(ctx, d.amount, d.asset_address)}: ${d.status}`);
      }
      for (const claim of cycle.claims.filter((x) => sameAddress(x.participant, me))) {
        console.log(`      you claimed ${amountOf(ctx, claim.amount, claim.asset_address)}`);
      }
    }
  }
  if (page.next_cursor !== null) console.log(`Older: the same command with --before ${page.next_cursor}`);
}
