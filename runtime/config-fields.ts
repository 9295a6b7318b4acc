/**
 * The configuration machinery Core and the facilitator share: a table of
 * fields (parser + default) resolved into one frozen object, every problem
 * collected and named, and the value parsers both use. Each service keeps its
 * own field table and its specialised parsers.
 */

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A service's configuration is unusable; `problems` lists each bad setting. */
export class ConfigProblemsError extends Error {
  override readonly name: string = "ConfigProblemsError";
  constructor(
    service: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid ${service} configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/** One setting: how to parse a raw value, and its default (absent = required). */
export interface FieldSpec<T, Resolved = unknown> {
  parse: (raw: unknown) => T;
  /** Receives the fields resolved so far (table order), for derived defaults. */
  fallback?: (resolved: Partial<Resolved>) => T;
}

export type FieldTable<C> = { [K in keyof C]: FieldSpec<C[K], C> };

/**
 * Validates `input` against `fields` (in table order). Unknown keys and bad or
 * missing values are all collected; `onProblems` turns them into the
 * service's own error (thrown).
 */
export function resolveConfig<C extends object>(
  fields: FieldTable<C>,
  input: { [K in keyof C]?: unknown },
  describe: (field: keyof C) => string,
  onProblems: (problems: string[]) => Error,
): C {
  const problems: string[] = [];
  for (const key of Object.keys(input)) {
    if (!(key in fields)) problems.push(`${key}: unknown setting`);
  }
  const resolved: Partial<Record<keyof C, unknown>> = {};
  for (const field of Object.keys(fields) as (keyof C)[]) {
    const spec = fields[field] as FieldSpec<unknown, C>;
    const raw = input[field];
    try {
      if (raw === undefined) {
        if (!spec.fallback) throw new Error("is required");
        resolved[field] = spec.fallback(resolved as Partial<C>);
      } else {
        resolved[field] = spec.parse(raw);
      }
    } catch (error) {
      problems.push(`${describe(field)}: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw onProblems(problems);
  return Object.freeze(resolved as C);
}

/** `coreUrl` with prefix `SURETY_FACILITATOR_` → `SURETY_FACILITATOR_CORE_URL`. */
export function envNameWithPrefix(prefix: string, field: string): string {
  return prefix + field.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}

// ---- value parsers: each throws an Error saying what is wrong (never echoing secrets) ----

export function describeValue(raw: unknown): string {
  if (raw === null) return "null";
  if (Array.isArray(raw)) return "an array";
  return typeof raw === "string" ? JSON.stringify(raw) : typeof raw;
}

export function nonEmptyString(raw: unknown): string {
  if (typeof raw !== "string" || raw.trim() === "") {
    throw new Error(`must be a non-empty string, got ${describeValue(raw)}`);
  }
  return raw.trim();
}

/** A JSON number or a decimal string, an integer in [min, max]. */
export function integer(raw: unknown, min: number, max: number): number {
  const value = typeof raw === "string" && /^[0-9]+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`must be an integer from ${min} to ${max}, got ${describeValue(raw)}`);
  }
  return value;
}

export function logLevel(raw: unknown): LogLevel {
  const value = nonEmptyString(raw);
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new Error(`must be one of ${LOG_LEVELS.join(", ")}`);
  }
  return value as LogLevel;
}

/** An absolute URL whose protocol (e.g. "https:") is one of `protocols`. */
export function absoluteUrl(raw: unknown, protocols: readonly string[]): { value: string; parsed: URL } {
  const value = nonEmptyString(raw);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new Error(`must be an absolute URL, got ${JSON.stringify(value)}`);
  }
  if (!protocols.includes(parsed.protocol)) throw new Error(`must use ${protocols.join(" or ")}`);
  return { value, parsed };
}
