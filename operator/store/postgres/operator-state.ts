/** {@link OperatorStateRepository} on PostgreSQL. */
import type { OperatorStateRepository } from "../repositories";
import type { PgConn } from "./common";

export class PgOperatorState implements OperatorStateRepository {
  constructor(private readonly db: PgConn) {}

  async getOperatorState(key: string): Promise<string | null> {
    const { rows } = await this.db.query("SELECT value FROM operator_state WHERE key = $1", [key]);
    return rows[0] ? (rows[0].value as string) : null;
  }

  async setOperatorState(key: string, value: string | null): Promise<void> {
    if (value === null) await this.db.query("DELETE FROM operator_state WHERE key = $1", [key]);
    else {
      await this.db.query(
        "INSERT INTO operator_state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, value],
      );
    }
  }
}
