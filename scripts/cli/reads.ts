/**
 * The CLI's sign-in to Core (docs/operator-auth.md): `login` / `logout` (SIWE, the session file of
 * ./session.ts).
 */
import type { CliContext } from "./context";
import { CoreHttp } from "./core";
import { SessionStore } from "./session";

// ---------------------------------------------------------------------------------------------
// login, logout
// ---------------------------------------------------------------------------------------------

export async function login(ctx: CliContext): Promise<void> {
  const wallet = ctx.wallet; // a CliError naming the ways to give a key when none is
  const store = new SessionStore(ctx.sessionFile);
  const session = await new CoreHttp(ctx.coreUrl).signIn(wallet);
  store.save(ctx.coreUrl, session);
  const minutes = Math.round((session.access_token_expires_at - Math.floor(Date.now() / 1000)) / 60);
  console.log(`Signed in to ${ctx.coreUrl} as ${session.address}.`);
  console.log(
    `Session stored in ${store.file} (mode 600): the access token lasts ${minutes} min and is refreshed ` +
      "as needed; guarantees and guarantee use it without the key.",
  );
}

export async function logout(ctx: CliContext): Promise<void> {
  const store = new SessionStore(ctx.sessionFile);
  const stored = store.read(ctx.coreUrl);
  if (stored === null) {
    console.log(`No session for ${ctx.coreUrl} in ${store.file}.`);
    return;
  }
  await new CoreHttp(ctx.coreUrl).logout(stored.refresh_token);
  store.remove(ctx.coreUrl);
  console.log(
    `Signed ${stored.address} out of ${ctx.coreUrl} (session revoked, removed from ${store.file}).`,
  );
}
