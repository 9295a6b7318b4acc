/** The store backends the contract suite (contract.ts) runs against. */
import { join } from "node:path";
import { SqliteStore } from "../../operator/store";
import { tempDir } from "../operator/helpers";
import type { StoreBackend } from "./contract";

/** SQLite: one file in a fresh temp dir; every instance opens its own connection to it. */
export const sqliteBackend: StoreBackend = {
  name: "SQLite",
  async create() {
    const dir = tempDir();
    const file = join(dir.path, "operator.sqlite");
    return {
      open: async () => SqliteStore.open(file),
      remove: async () => dir.remove(),
    };
  },
};

export const STORE_BACKENDS: readonly StoreBackend[] = [sqliteBackend];
