/**
 * The refusals of Core's domain services (auth, guarantees, lifecycle): a stable machine-readable `code`, a
 * message naming the problem, and `details` (fields an answer carries next to `error` and `code`, e.g. the
 * stored `certificate` of a duplicate). No HTTP status: `api/errors.ts` maps each code to its status, in one
 * table (docs/architecture.md, "Layers and what may import what").
 */
export class DomainError<Code extends string = string> extends Error {
  override readonly name: string = "DomainError";

  constructor(
    readonly code: Code,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}
