/**
 * Certificate signing on a worker thread. The BLS signature is the largest
 * single cost of an issuance; on its own thread it overlaps with HTTP parsing,
 * verification and the store on the event loop.
 * Measured with `npm run bench:issuance` (docs/benchmarks.md): it costs
 * ≈ 0.1–0.2 ms more CPU per guarantee (messages between threads) and takes
 * the signature off the event loop; it won in every run on this 2-core machine
 * with G2 signatures (≈ 0.5 ms each), so it is Core's default
 * (`SURETY_BLS_SIGNING_WORKER=false` signs in-thread with the sdk's
 * `createBlsSigner`).
 *
 * The worker runs a few lines of plain JavaScript (no TypeScript loader in
 * worker threads) that call the native addon exactly as sdk/bls.ts does:
 * `sign(secretKey, message, CERTIFICATE_DST)`. The tests compare its
 * signatures with the sdk signer's. Without the addon (pure-JS fallback) there
 * is no worker: signAsync signs in-thread.
 */
import { Worker } from "node:worker_threads";
import {
  blsKeyFromSecret,
  type BlsSigner,
  blsBackend,
  CERTIFICATE_DST,
  createBlsSigner,
  NATIVE_BLS_ADDON,
} from "../../sdk/bls";
import type { OperatorConfig } from "../config";

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const addon = require(workerData.addon);
const key = workerData.secretKey;
const dst = new TextEncoder().encode(workerData.dst);
parentPort.on("message", ({ id, packed, lengths }) => {
  const signatures = [];
  let offset = 0;
  for (const length of lengths) {
    signatures.push(addon.sign(key, packed.subarray(offset, offset + length), dst));
    offset += length;
  }
  parentPort.postMessage({ id, signatures });
});
`;

/**
 * A batch's messages copied end to end into one fresh buffer that is transferred to the worker, not
 * cloned. A message is usually a view of Node's shared 8 KiB `Buffer` pool (`Buffer.from(hex, "hex")`),
 * and cloning a view copies its whole backing buffer: 8 KiB each way per certificate (docs/benchmarks.md,
 * "Fourth round: Core's CPU").
 */
function packMessages(
  id: number,
  batch: readonly Request[],
): { message: { id: number; packed: Uint8Array; lengths: number[] }; buffer: ArrayBuffer } {
  const lengths = batch.map((request) => request.message.byteLength);
  const buffer = new ArrayBuffer(lengths.reduce((sum, length) => sum + length, 0));
  const packed = new Uint8Array(buffer);
  let offset = 0;
  for (const request of batch) {
    packed.set(request.message, offset);
    offset += request.message.byteLength;
  }
  return { message: { id, packed, lengths }, buffer };
}

/** A {@link BlsSigner} that can also sign off the event loop. */
export interface AsyncBlsSigner extends BlsSigner {
  /** Signs on the worker thread (in-thread once the worker has failed). */
  signAsync(message: Uint8Array): Promise<Uint8Array>;
  /** Stops the worker; later calls sign in-thread. */
  close(): Promise<void>;
}

interface Request {
  message: Uint8Array;
  resolve(signature: Uint8Array): void;
}

/**
 * Signs with `secretKey` (32 bytes) on one worker thread. Requests made in
 * the same tick go to the worker as one message. If the worker dies, its
 * outstanding requests and all later ones are signed in-thread, so a
 * crashed worker costs speed, never an issuance.
 */
export function workerBlsSigner(secretKey: Uint8Array): AsyncBlsSigner {
  const local = createBlsSigner(secretKey); // also validates the key
  let worker: Worker | null =
    blsBackend() === "blst"
      ? new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: { secretKey, addon: NATIVE_BLS_ADDON, dst: CERTIFICATE_DST },
        })
      : null;
  // Never keeps the process alive on its own (close() is still the way to stop it).
  worker?.unref();
  let queued: Request[] = [];
  let scheduled = false;
  let nextId = 0;
  const inFlight = new Map<number, Request[]>();

  const signLocally = (requests: Request[]) => {
    for (const request of requests) request.resolve(local.sign(request.message));
  };
  const fail = () => {
    worker = null;
    for (const requests of inFlight.values()) signLocally(requests);
    inFlight.clear();
  };
  worker?.on("message", ({ id, signatures }: { id: number; signatures: Uint8Array[] }) => {
    const requests = inFlight.get(id);
    inFlight.delete(id);
    requests?.forEach((request, i) => request.resolve(signatures[i]));
  });
  worker?.on("error", fail);
  worker?.on("exit", fail);

  const flush = () => {
    scheduled = false;
    const batch = queued;
    queued = [];
    if (worker === null) return signLocally(batch);
    const id = nextId++;
    inFlight.set(id, batch);
    const { message, buffer } = packMessages(id, batch);
    worker.postMessage(message, [buffer]);
  };

  return {
    publicKey: local.publicKey,
    sign: local.sign,
    signAsync: (message) =>
      new Promise((resolve) => {
        queued.push({ message, resolve });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      }),
    close: async () => {
      const stopping = worker;
      if (stopping === null) return;
      fail(); // outstanding requests are signed in-thread
      await stopping.terminate();
    },
  };
}

/**
 * Core's certificate signer for `config.blsSecret` (IETF KeyGen from the configured key material): on a
 * worker thread with `worker` (`SURETY_BLS_SIGNING_WORKER`), else in-thread. The one place Core builds it.
 */
export function operatorBlsSigner(
  config: Pick<OperatorConfig, "blsSecret">,
  options: { worker: true },
): AsyncBlsSigner;
export function operatorBlsSigner(
  config: Pick<OperatorConfig, "blsSecret">,
  options?: { worker?: boolean },
): BlsSigner;
export function operatorBlsSigner(
  config: Pick<OperatorConfig, "blsSecret">,
  options: { worker?: boolean } = {},
): BlsSigner {
  const { secretKey } = blsKeyFromSecret(config.blsSecret, "blsSecret");
  return options.worker ? workerBlsSigner(secretKey) : createBlsSigner(secretKey);
}

/** True for a signer that can sign off the event loop. */
export function isAsyncBlsSigner(signer: BlsSigner): signer is AsyncBlsSigner {
  return typeof (signer as Partial<AsyncBlsSigner>).signAsync === "function";
}
