/**
 * "Service down" for tests: a loopback port held by a listener that drops every
 * connection at once. Binding a free port and releasing it is not enough: the
 * next server a test starts may be handed that very port, and the "down"
 * service then answers (a flaky 404 instead of a connection failure).
 */
import { type Server, type Socket, createServer } from "node:net";
import type { AddressInfo } from "node:net";

const held = new Set<Server>();

/** A URL on which every connection fails; freed by {@link closeUnreachableServices}. */
export async function unreachableUrl(): Promise<string> {
  const server = createServer((socket: Socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  held.add(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes every listener {@link unreachableUrl} started. Call it from an `after` hook. */
export async function closeUnreachableServices(): Promise<void> {
  const servers = [...held];
  held.clear();
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
}
