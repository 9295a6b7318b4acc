/** {@link OperatorStateRepository} on a better-sqlite3 connection (schema: migration 2). */
import type { Database, Statement } from "better-sqlite3";
import { type OperatorStateRepository } from "../repositories";
import { type Row, type SyncOf } from "./common";

export class SqliteOperatorState implements SyncOf<OperatorStateRepository> {
  private readonly stmt: ReturnType<typeof prepare>;

  constructor(db: Database) {
    this.stmt = prepare(db);
  }

  getOperatorState(key: string): string | null {
    const row = this.stmt.getState.get(key) as Row | undefined;
    return row ? (row.value as string) : null;
  }

  setOperatorState(key: string, value: string | null): void {
    if (value === null) this.stmt.deleteState.run(key);
    else this.stmt.putState.run(key, value);
  }
}

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    deleteState: p("DELETE FROM operator_state WHERE key = ?"),
    getState: p("SELECT value FROM operator_state WHERE key = ?"),
    putState: p(
      "INSERT INTO operator_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ),
  };
}
