/**
 * Queries compiled once per engine, for the hot path (issuance, the check-and-lock). A query built with
 * the query builder costs ≈ 15–25 µs per call to build and compile (docs/store.md, "Query builder"); a
 * {@link Precompiled} one is built and compiled the first time an engine runs it, with a placeholder for
 * each argument, and afterwards only binds its arguments: the SQL text is the same string every time,
 * so SQLite's statement cache (engine.ts) finds it at once.
 *
 * Only for queries of a fixed shape: an argument is one SQL parameter (never a list an `in` expands).
 */
import type { Compilable, CompiledQuery, Kysely } from "kysely";
import type { EngineKind, SqlEngine } from "./engine";
import type { Schema } from "./schema";

/** The `index`th argument of the query, typed as the column it is compared with or written to. */
export type Arg = <T>(index: number) => T;

/** The marker an argument's placeholder carries while the query is compiled (never sent to a database). */
const MARK = "\u0000surety-arg:";

interface Template<R> {
  compiled: CompiledQuery<R>;
  /** Per SQL parameter: the argument's index, or a constant the query holds (boxed). */
  slots: readonly (number | { value: unknown })[];
}

export class Precompiled<R> {
  private readonly templates: Partial<Record<EngineKind, Template<R>>> = {};

  constructor(private readonly build: (db: Kysely<Schema>, arg: Arg) => Compilable<R>) {}

  /** The query with `args` bound, on `engine`'s dialect (what `engine.all/first/run` take). */
  with(engine: SqlEngine, ...args: unknown[]): Compilable<R> {
    const template = (this.templates[engine.kind] ??= this.compile(engine.db));
    const parameters = template.slots.map((slot) => (typeof slot === "number" ? args[slot] : slot.value));
    const { query, queryId, sql } = template.compiled;
    return { compile: () => ({ query, queryId, sql, parameters }) };
  }

  private compile(db: Kysely<Schema>): Template<R> {
    const compiled = this.build(db, <T>(index: number) => `${MARK}${index}` as T).compile();
    const slots = compiled.parameters.map((value) =>
      typeof value === "string" && value.startsWith(MARK) ? Number(value.slice(MARK.length)) : { value },
    );
    return { compiled, slots };
  }
}

/** A query compiled once per engine ({@link Precompiled}). */
export const precompile = <R>(build: (db: Kysely<Schema>, arg: Arg) => Compilable<R>): Precompiled<R> =>
  new Precompiled(build);
