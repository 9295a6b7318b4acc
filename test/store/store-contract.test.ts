import { STORE_BACKENDS, stopTestPostgresBackend } from "./backends";
import { describeStoreContract } from "./contract";

for (const backend of STORE_BACKENDS) describeStoreContract(backend);

after(async function () {
  this.timeout(60_000);
  await stopTestPostgresBackend();
});
