/** {@link OperatorStateRepository} for both engines (table `operator_state`, migration 2). */
import type { OperatorStateRepository } from "../repositories";
import type { SqlEngine } from "./engine";

export class OperatorState implements OperatorStateRepository {
  constructor(private readonly sql: SqlEngine) {}

  async getOperatorState(key: string): Promise<string | null> {
    const { db } = this.sql;
    const row = await this.sql.first(db.selectFrom("operator_state").select("value").where("key", "=", key));
    return row?.value ?? null;
  }

  async setOperatorState(key: string, value: string | null): Promise<void> {
    const { db } = this.sql;
    if (value === null) {
      await this.sql.run(db.deleteFrom("operator_state").where("key", "=", key));
      return;
    }
    await this.sql.run(
      db
        .insertInto("operator_state")
        .values({ key, value })
        .onConflict((conflict) => conflict.column("key").doUpdateSet({ value })),
    );
  }
}
