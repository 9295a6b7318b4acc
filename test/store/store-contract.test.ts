import { STORE_BACKENDS } from "./backends";
import { describeStoreContract } from "./contract";

for (const backend of STORE_BACKENDS) describeStoreContract(backend);
