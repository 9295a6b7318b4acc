/**
 * The official x402 `exact` facilitator on the devnet's chain (`npm run devnet -- --with-exact`): `@x402/core`'s
 * `x402Facilitator` with `@x402/evm`'s exact scheme registered for `eip155:<chain id>`, a viem signer over
 * the node's RPC (dev account #16, {@link DEVNET_ROLES}.exactFacilitator), served over HTTP with the
 * endpoints `HTTPFacilitatorClient` calls: `GET /supported`, `POST /verify`, `POST /settle`, plus `GET /health`.
 * It settles EIP-3009 `transferWithAuthorization` on any token that has it (the devnet deploys xUSD,
 * contracts/test/Eip3009Token.sol) and waits for the receipt, as in `npm run bench:vs-exact`.
 *
 * A service process of its own (scripts/devnet.ts starts it, logs to `<data dir>/logs/exact.log`), set by
 * its environment: EXACT_FACILITATOR_HOST, _PORT, _RPC_URL, _CHAIN_ID, _PRIVATE_KEY.
 */
import { createServer } from "node:http";
import { x402Facilitator } from "@x402/core/facilitator";
import type { Network } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import express from "express";
import { http, createWalletClient, defineChain, publicActions } from "viem";
import { nonceManager, privateKeyToAccount } from "viem/accounts";

export interface ExactFacilitatorSettings {
  host: string;
  port: number;
  rpcUrl: string;
  chainId: number;
  privateKey: `0x${string}`;
}

function log(fields: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify({ time: new Date().toISOString(), ...fields }) + "\n");
}

/** The facilitator's Express app: the x402 facilitator HTTP endpoints over `x402Facilitator`. */
export function exactFacilitatorApp(
  settings: Omit<ExactFacilitatorSettings, "host" | "port">,
): express.Express {
  const network = `eip155:${settings.chainId}` as Network;
  const chain = defineChain({
    id: settings.chainId,
    name: "surety-devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [settings.rpcUrl] } },
  });
  const account = privateKeyToAccount(settings.privateKey, { nonceManager });
  const wallet = createWalletClient({
    account,
    chain,
    transport: http(settings.rpcUrl),
    pollingInterval: 100,
  }).extend(publicActions);
  // One signer's transactions reach the node in nonce order (a nonce gap cannot be queued): sends are
  // serialised, receipts awaited concurrently.
  let sending: Promise<unknown> = Promise.resolve();
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => wallet.readContract(args as never),
    verifyTypedData: (args) => wallet.verifyTypedData(args as never),
    writeContract: (args) => {
      const send = sending.then(() => wallet.writeContract({ ...args, account, chain } as never));
      sending = send.catch(() => undefined);
      return send;
    },
    sendTransaction: (args) => wallet.sendTransaction({ ...args, account, chain }),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args) as never,
    getCode: (args) => wallet.getCode(args),
  });
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: network });

  const app = express();
  app.use(express.json({ limit: "64kb" }));
  app.get("/health", (_req, res) => void res.json({ status: "ok", network, signer: account.address }));
  app.get("/supported", (_req, res) => void res.json(facilitator.getSupported()));
  for (const action of ["verify", "settle"] as const) {
    app.post(`/${action}`, async (req, res) => {
      const body = req.body as { paymentPayload?: unknown; paymentRequirements?: unknown } | undefined;
      if (typeof body?.paymentPayload !== "object" || typeof body?.paymentRequirements !== "object") {
        res.status(400).json({ error: "body must hold paymentPayload and paymentRequirements" });
        return;
      }
      try {
        const result = await facilitator[action](
          body.paymentPayload as never,
          body.paymentRequirements as never,
        );
        log({ action, ...result });
        res.json(result);
      } catch (error) {
        log({ action, error: (error as Error).message });
        res.status(500).json({ error: (error as Error).message });
      }
    });
  }
  return app;
}

export function exactFacilitatorSettingsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): ExactFacilitatorSettings {
  const need = (name: string): string => {
    const value = env[`EXACT_FACILITATOR_${name}`];
    if (value === undefined || value === "") throw new Error(`EXACT_FACILITATOR_${name} is not set`);
    return value;
  };
  const privateKey = need("PRIVATE_KEY");
  if (!/^0x[0-9a-fA-F]{64}$/.test(privateKey)) throw new Error("EXACT_FACILITATOR_PRIVATE_KEY: not a key");
  return {
    host: need("HOST"),
    port: Number(need("PORT")),
    rpcUrl: need("RPC_URL"),
    chainId: Number(need("CHAIN_ID")),
    privateKey: privateKey as `0x${string}`,
  };
}

function main(): void {
  const settings = exactFacilitatorSettingsFromEnv();
  const server = createServer(exactFacilitatorApp(settings));
  server.listen(settings.port, settings.host, () => {
    log({
      msg: "exact facilitator listening",
      host: settings.host,
      port: settings.port,
      chainId: settings.chainId,
    });
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

if (require.main === module) main();
