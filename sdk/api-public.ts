/**
 * Wire shapes of Core's public and sign-in endpoints (docs/operator-api.md, docs/operator-auth.md,
 * docs/monitoring.md): tokens, public params, health, SIWE. Components of Core's OpenAPI document
 * (`core-api.ts`).
 */
import { z } from "zod/v4";
import { HEALTH_CHECK_STATES, HEALTH_CHECKS, type HealthCheckName } from "./api-vocabulary";
import { Address, Bytes32, UnixSeconds, DateTime, Uint } from "./api-common";

export const HealthCheckState = z.enum(HEALTH_CHECK_STATES);

export const Tokens = z.object({
  chain_id: z.int().min(1),
  tokens: z.array(
    z.object({
      symbol: z.string().min(1),
      address: Address,
      decimals: z.int().min(0).max(255),
    }),
  ),
});
export type Tokens = z.infer<typeof Tokens>;

/** `protocol_timings` of the public params: the Vault's `timings()`, in seconds (docs/operator-api.md). */
export const ProtocolTimings = z.object({
  cycle_length_seconds: z.int().min(1),
  commit_delay_seconds: z.int().min(0),
  challenge_window_seconds: z
    .int()
    .min(1)
    .describe("W: challenges (and veto) until commit + W, answers until commit + 2W."),
  payment_window_seconds: z
    .int()
    .min(0)
    .describe("P: the payment deadline is commit + 2W + P (it starts after the answer window)."),
  default_window_seconds: z.int().min(0),
  withdrawal_grace_period_seconds: z.int().min(0),
  confirmation_lag_seconds: z
    .int()
    .min(0)
    .describe("How far Core's view trails the chain head; counted in the grace-period invariant."),
});
export type ProtocolTimings = z.infer<typeof ProtocolTimings>;

export const PublicParams = z.object({
  public_key: z
    .array(z.int().min(0).max(255))
    .min(96)
    .max(96)
    .describe("Core's BLS12-381 G2 key, 96 compressed bytes."),
  contract_address: Address,
  ethereum_http_rpc_url: z.url(),
  eip712_name: z.string(),
  eip712_version: z.string(),
  chain_id: z.int().min(1),
  max_accepted_guarantee_version: z.literal([1, 2]),
  accepted_guarantee_versions: z.array(z.literal([1, 2])).min(1),
  active_guarantee_domain_separator: Bytes32,
  trusted_validation_registries: z.array(Address),
  validation_hash_canonicalization_version: z.literal("surety-validation-request-v1"),
  clearing_house_address: Address.describe("The ClearingHouse (added to the spec's fields)."),
  protocol_timings: ProtocolTimings.describe(
    "The Vault's `timings()` as Core knows them now; null before Core has read them.",
  ).nullable(),
  latest_validation_deadline: UnixSeconds.describe(
    "The latest V2 `validation_deadline` issuance accepts at the time of this response, counted from the chain time Core has indexed (it moves forward as Core indexes blocks); null: no cap, or no block indexed yet.",
  ).nullable(),
});
export type PublicParams = z.infer<typeof PublicParams>;

export const ChainSync = z.object({
  state: z.enum(["off", "starting", "ok", "lagging", "stale", "halted"]),
  reason: z.string().describe("Why the state is not ok, in words.").nullable(),
  head_block: z.int().min(0).describe("Latest head the indexer read.").nullable(),
  indexed_block: z.int().min(-1).describe("The indexer's cursor block.").nullable(),
  lag_blocks: z.int().min(0).describe("Confirmed head − indexed block at the last tick.").nullable(),
  max_lag_blocks: z.int().min(0).describe("`SURETY_INDEXER_MAX_LAG_BLOCKS`."),
  last_synced_at: DateTime.nullable(),
  seconds_since_sync: z.int().min(0).nullable(),
  max_stale_seconds: z.int().min(1).describe("`SURETY_INDEXER_MAX_STALE_SECONDS`."),
});
export type ChainSync = z.infer<typeof ChainSync>;

export const CommitBond = z.object({
  state: z
    .enum(["off", "ok", "short", "unknown"])
    .describe(
      "`short`: the clearing scheduler holds the next commit back because the operator bond is below the ClearingHouse's floor (nothing is sent until `ClearingHouse.postBond` tops it up); `off`: nothing is committed; `unknown`: the verdict published by the process or replica that runs the scheduler is missing or stale. Issuance is refused while `short` (`commit_bond_short`) or `unknown` (`commit_bond_unknown`); it does not change `status`.",
    ),
  floor_bps: z
    .int()
    .min(0)
    .max(10000)
    .describe("`ClearingHouse.bondFloorBps()` at the last check; null before one.")
    .nullable(),
  cycle_id: z.int().min(1).describe("The cycle last checked.").nullable(),
  assets: z
    .array(
      z.object({
        asset: Address,
        bond: Uint.describe("`ClearingHouse.bondOf(asset)` at the check, base units."),
        required: Uint.describe(
          "ceil((ClearingHouse.bondAtRisk + total debit) × floor_bps / 10000), base units: the earlier cycles the floor still counts plus this one.",
        ),
        short: z.boolean(),
      }),
    )
    .describe("Each asset of that cycle with a non-zero requirement."),
  since: DateTime.describe("Since when the state holds (wall clock).").nullable(),
});
export type CommitBond = z.infer<typeof CommitBond>;

export const CommitDeadline = z
  .object({
    state: z
      .enum(["off", "ok", "at_risk"])
      .describe(
        "`at_risk`: the clearing commits Core owes might land after cutoff + commitDelay + confirmationLag (the grace-period budget), or the guarantees waiting exceed what the commits after the next cutoff take in time; issuance is refused (`commit_deadline_at_risk`) until it clears. `off`: not judged here (no scheduler, no timings yet, or the published verdict is stale: then `commit_bond` reads `unknown`).",
      ),
    deadline: DateTime.describe(
      "Chain time by which the earliest owed commit must land; null: none owed.",
    ).nullable(),
    cutoff: DateTime.describe("The cutoff of that owed work.").nullable(),
    commits_owed: z.int().min(0),
    waiting: z.int().min(0).describe("Guarantees waiting for the next cutoff (counted up to capacity + 1)."),
    capacity: z.int().min(0).describe("Guarantees the commits after one cutoff take in time.").nullable(),
    seconds_per_commit: z
      .int()
      .min(0)
      .describe("Chain seconds one commit takes, as estimated from the recent ones."),
    reason: z.string().nullable(),
    since: DateTime.describe("Since when the state holds (wall clock).").nullable(),
  })
  .describe('Added, optional (docs/clearing.md, "Cadence and the commit deadline").');
export type CommitDeadline = z.infer<typeof CommitDeadline>;

export const Leadership = z.object({
  role: z
    .enum(["sole", "leader", "follower", "never"])
    .describe(
      "This replica's part in the background work (indexer, clearing, keeper, V2 lifecycle, webhooks): `sole` on a store nobody else shares (SQLite), `leader` / `follower` among replicas on one PostgreSQL database (docs/scale-out.md), `never` for a process that only serves the API.",
    ),
  replica: z.string().describe("This replica's id (name/pid/random, unique per start)."),
  leader: z.string().describe("The leading replica's id as last seen; null: none now.").nullable(),
  token: z.int().min(1).describe("Fencing token of the current term.").nullable(),
  lease_expires_at: DateTime.describe(
    "When the current term's lease runs out unless renewed (the database's clock).",
  ).nullable(),
});
export type Leadership = z.infer<typeof Leadership>;

export const HealthWarning = z.object({
  check: z.enum(HEALTH_CHECKS),
  subject: z
    .string()
    .describe("What it is about: a webhook subscription id, an asset, a cycle; null for Core as a whole.")
    .nullable(),
  reason: z.string().describe("Why, in words, with the figure and the threshold."),
  value: z.number().describe("The figure judged (seconds, blocks, basis points, base units)."),
  threshold: z.number().describe("The threshold it was judged against."),
});
export type HealthWarning = z.infer<typeof HealthWarning>;

export const Health = z.object({
  status: z.enum(["ok", "fail"]),
  db: z.enum(["ok", "fail"]),
  chain_rpc: z.enum(["ok", "fail"]),
  indexer: z
    .enum(["ok", "fail", "off"])
    .describe("`fail` while issuance is refused (see `chain_sync`); `off`: no indexer runs in this process."),
  chain_sync: ChainSync,
  commit_bond: CommitBond,
  commit_deadline: CommitDeadline.optional(),
  leadership: Leadership,
  checks: z
    .object(
      Object.fromEntries(HEALTH_CHECKS.map((check) => [check, HealthCheckState])) as Record<
        HealthCheckName,
        typeof HealthCheckState
      >,
    )
    .describe(
      "Added, optional (docs/monitoring.md): each warning check, `warn` while it raises a warning, `off` when this process has nothing to judge it by. A warning never changes `status` nor the HTTP status.",
    )
    .optional(),
  warnings: z
    .array(HealthWarning)
    .describe("Added, optional: which checks warn and why; empty when none does.")
    .optional(),
  bls_signer: z
    .enum(["blst", "noble"])
    .describe(
      "The BLS implementation signing certificates: `blst` (the native addon native/blst-minsig) or `noble` (the pure-JavaScript fallback, about 40 certificates/s; Core starts on it only with SURETY_ALLOW_SLOW_BLS).",
    ),
});
export type Health = z.infer<typeof Health>;

export const NonceRequest = z.object({
  address: Address,
});
export type NonceRequest = z.infer<typeof NonceRequest>;

export const NonceResponse = z.object({
  nonce: z.string().regex(/^[0-9a-f]{32}$/),
  siwe: z.object({
    domain: z.string(),
    uri: z.string(),
    chain_id: z.int().min(1),
    statement: z.string(),
    issued_at: DateTime,
    expiration: DateTime,
  }),
});
export type NonceResponse = z.infer<typeof NonceResponse>;

export const SignInRequest = z.object({
  address: Address,
  message: z.string().max(4096).describe("The complete EIP-4361 message."),
  signature: z.string().regex(/^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/),
});
export type SignInRequest = z.infer<typeof SignInRequest>;

export const TokenResponse = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  expires_in: z.int().min(1),
});
export type TokenResponse = z.infer<typeof TokenResponse>;

export const RefreshTokenRequest = z.object({
  refresh_token: z.string(),
});
export type RefreshTokenRequest = z.infer<typeof RefreshTokenRequest>;
