import { expect } from "chai";
import { Router } from "express";
import { decodeJwt } from "jose";
import { Wallet } from "ethers";
import { SignJWT } from "jose";
import { canIssueFor, SCOPE_ISSUE_GUARANTEES } from "../../operator/auth";
import { principalOf, requireAccessToken } from "../../operator/api/access-middleware";
import type { RouteModule } from "../../operator/api";
import {
  type NonceBody,
  post,
  request,
  requestNonce,
  signIn,
  siweMessageFor,
  startTestCore,
  T0,
  TEST_CHAIN_ID,
  TEST_DOMAIN,
  TEST_URI,
  type TestCore,
} from "./helpers";

// Hardhat's first two dev accounts: fixed keys keep failures reproducible.
const alice = new Wallet("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const bob = new Wallet("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const facilitator = new Wallet("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");

/** A route behind requireAccessToken that echoes the principal. */
const whoAmI: RouteModule = (context) =>
  Router().get("/test/whoami", requireAccessToken(context.accessTokens), (req, res) => {
    const principal = principalOf(req);
    res.json({ wallet: principal.wallet, scopes: principal.scopes });
  });

describe("operator auth (SIWE, tokens)", () => {
  let t: TestCore;
  let url: string;

  beforeEach(async () => {
    t = await startTestCore({}, { routes: [whoAmI] });
    url = t.core.url;
  });

  afterEach(async () => {
    await t.stop();
  });

  async function signed(wallet: Wallet, template: NonceBody, changes = {}) {
    const message = siweMessageFor(wallet.address, template, changes);
    return { address: wallet.address, message, signature: await wallet.signMessage(message) };
  }

  function expectError(response: { status: number; body: unknown }, status: number, code: string) {
    expect(response.status, JSON.stringify(response.body)).to.equal(status);
    expect(response.body).to.have.property("code", code);
    expect(response.body).to.have.property("error").that.is.a("string").and.not.empty;
  }

  describe("POST /auth/nonce", () => {
    it("returns a nonce and the SIWE template from config", async () => {
      const response = await post(url, "/auth/nonce", { address: alice.address.toLowerCase() });
      expect(response.status).to.equal(200);
      expect(response.body.nonce).to.match(/^[0-9a-f]{32}$/);
      expect(response.body.siwe).to.deep.equal({
        domain: TEST_DOMAIN,
        uri: TEST_URI,
        chain_id: TEST_CHAIN_ID,
        statement: t.config.siweStatement,
        issued_at: new Date(T0 * 1000).toISOString(),
        expiration: new Date((T0 + 300) * 1000).toISOString(),
      });
    });

    it("issues a different nonce each time", async () => {
      const a = await requestNonce(url, alice.address);
      const b = await requestNonce(url, alice.address);
      expect(a.nonce).to.not.equal(b.nonce);
    });

    it("400 when the address is missing", async () => {
      const response = await post(url, "/auth/nonce", {});
      expectError(response, 400, "invalid_request");
      expect(response.body.error).to.match(/^address: /);
    });

    it("400 when the address is malformed", async () => {
      for (const address of ["0x1234", "not an address", 42, null]) {
        const response = await post(url, "/auth/nonce", { address });
        expectError(response, 400, "invalid_request");
        expect(response.body.error).to.match(/^address: /);
      }
    });

    it("400 when there is no JSON body", async () => {
      const response = await request(url, "POST", "/auth/nonce");
      expectError(response, 400, "invalid_request");
    });
  });

  describe("POST /auth/verify", () => {
    it("200 with an access token, a refresh token and expires_in", async () => {
      const template = await requestNonce(url, alice.address);
      const response = await post(url, "/auth/verify", await signed(alice, template));
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      const { access_token, refresh_token, expires_in } = response.body;
      expect(expires_in).to.equal(900);
      expect(refresh_token).to.match(/^[A-Za-z0-9_-]{43}$/);
      const claims = decodeJwt(access_token);
      expect(claims.sub).to.equal(alice.address);
      expect(claims.scopes).to.deep.equal([SCOPE_ISSUE_GUARANTEES]);
      expect(claims.iat).to.equal(T0);
      expect(claims.exp).to.equal(T0 + 900);
      expect(claims.iss).to.equal(t.config.jwtIssuer);
      expect(claims.aud).to.equal(t.config.jwtAudience);
      expect(claims.jti).to.be.a("string");
    });

    it("accepts the body address in any letter case", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template);
      const response = await post(url, "/auth/verify", { ...body, address: alice.address.toLowerCase() });
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(decodeJwt(response.body.access_token).sub).to.equal(alice.address);
    });

    it("400 when a field is missing", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template);
      for (const field of ["address", "message", "signature"] as const) {
        const { [field]: _omitted, ...rest } = body;
        const response = await post(url, "/auth/verify", rest);
        expectError(response, 400, "invalid_request");
        expect(response.body.error).to.match(new RegExp(`^${field}: `));
      }
    });

    it("400 when a field has the wrong type or shape", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template);
      const cases: [string, unknown][] = [
        ["address", 1],
        ["message", 123],
        ["message", ""],
        ["signature", "not hex"],
        ["signature", "0x1234"],
        ["signature", ["0x00"]],
      ];
      for (const [field, value] of cases) {
        const response = await post(url, "/auth/verify", { ...body, [field]: value });
        expectError(response, 400, "invalid_request");
        expect(response.body.error).to.match(new RegExp(`^${field}: `));
      }
      expectError(await post(url, "/auth/verify", [body]), 400, "invalid_request");
    });

    it("401 for a nonce the server never issued", async () => {
      const template = await requestNonce(url, alice.address);
      const response = await post(
        url,
        "/auth/verify",
        await signed(alice, { ...template, nonce: "abcdef1234567890" }),
      );
      expectError(response, 401, "nonce_unknown");
    });

    it("401 when the nonce is used a second time", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template);
      expect((await post(url, "/auth/verify", body)).status).to.equal(200);
      expectError(await post(url, "/auth/verify", body), 401, "nonce_used");
    });

    it("401 when the nonce has expired", async () => {
      const template = await requestNonce(url, alice.address);
      t.clock.advance(301);
      // A fresh message without an expiry isolates the nonce's own lifetime.
      const body = await signed(alice, template, {
        issuedAt: new Date(t.clock.nowSeconds() * 1000).toISOString(),
        expirationTime: undefined,
      });
      expectError(await post(url, "/auth/verify", body), 401, "nonce_expired");
    });

    it("401 when the message itself has expired", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template);
      t.clock.advance(300);
      expectError(await post(url, "/auth/verify", body), 401, "siwe_message_expired");
    });

    it("401 when the message is issued in the future", async () => {
      const template = await requestNonce(url, alice.address);
      const future = new Date((T0 + 120) * 1000).toISOString();
      const body = await signed(alice, template, { issuedAt: future });
      expectError(await post(url, "/auth/verify", body), 401, "siwe_not_yet_valid");
    });

    it("401 when the nonce was issued to another address", async () => {
      const template = await requestNonce(url, alice.address);
      expectError(
        await post(url, "/auth/verify", await signed(bob, template)),
        401,
        "nonce_address_mismatch",
      );
    });

    it("401 for the wrong domain", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template, { domain: "evil.example" });
      expectError(await post(url, "/auth/verify", body), 401, "siwe_domain_mismatch");
    });

    it("401 for the wrong URI", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template, { uri: "https://evil.example" });
      expectError(await post(url, "/auth/verify", body), 401, "siwe_uri_mismatch");
    });

    it("401 for the wrong chain id", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template, { chainId: 1 });
      expectError(await post(url, "/auth/verify", body), 401, "siwe_chain_id_mismatch");
    });

    it("401 for the wrong statement", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template, { statement: "Give me all your money." });
      expectError(await post(url, "/auth/verify", body), 401, "siwe_statement_mismatch");
    });

    it("401 when the body address differs from the message address", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template);
      const response = await post(url, "/auth/verify", { ...body, address: bob.address });
      expectError(response, 401, "siwe_address_mismatch");
    });

    it("401 when another wallet signed the message", async () => {
      const template = await requestNonce(url, alice.address);
      const message = siweMessageFor(alice.address, template);
      const signature = await bob.signMessage(message);
      const response = await post(url, "/auth/verify", { address: alice.address, message, signature });
      expectError(response, 401, "invalid_signature");
    });

    it("401 when the signed message was tampered with", async () => {
      const template = await requestNonce(url, alice.address);
      const body = await signed(alice, template);
      const later = new Date((T0 + 200) * 1000).toISOString();
      const message = body.message.replace(template.siwe.expiration, later);
      expect(message).to.not.equal(body.message);
      expectError(await post(url, "/auth/verify", { ...body, message }), 401, "invalid_signature");
    });

    it("401 for a message that is not EIP-4361, naming the line in one line of text", async () => {
      const message = "please let me in";
      const signature = await alice.signMessage(message);
      const response = await post(url, "/auth/verify", { address: alice.address, message, signature });
      expectError(response, 401, "invalid_siwe_message");
      // Not the ABNF parser's internal state ({"success":false,"state":103,…}).
      expect(response.body.error).to.equal(
        'message is not a valid EIP-4361 message: line 1 does not fit the format: "please let me in"',
      );
    });

    it("401 naming the EIP-55 form for a message whose address is not checksummed, without a stray newline", async () => {
      const template = await requestNonce(url, alice.address);
      const canonical = siweMessageFor(alice.address, template);
      const lower = alice.address.toLowerCase();
      const message = canonical.replace(alice.address, lower);
      const signature = await alice.signMessage(message);
      const response = await post(url, "/auth/verify", { address: alice.address, message, signature });
      expectError(response, 401, "invalid_siwe_message");
      expect(response.body.error).to.equal(
        `message is not a valid EIP-4361 message: line 2: address ${lower} is not in EIP-55 checksummed ` +
          `form (EIP-55: ${alice.address})`,
      );
    });

    it("401 naming what is wrong for a missing field, CRLF line ends and a trailing newline", async () => {
      const template = await requestNonce(url, alice.address);
      const canonical = siweMessageFor(alice.address, template);
      const cases: [string, string][] = [
        [canonical.replace(/\nNonce: [^\n]*/, ""), 'line 9 does not fit the format: "Issued At: '],
        [canonical.replace(/\n/g, "\r\n"), `line 1 does not fit the format: "${TEST_DOMAIN} wants you`],
        [
          canonical + "\n",
          "unexpected text after the last field, at line 12 (no trailing newline is allowed)",
        ],
      ];
      for (const [message, expected] of cases) {
        const signature = await alice.signMessage(message);
        const response = await post(url, "/auth/verify", { address: alice.address, message, signature });
        expectError(response, 401, "invalid_siwe_message");
        expect(response.body.error).to.include(`message is not a valid EIP-4361 message: ${expected}`);
        expect(response.body.error).to.not.match(/\n|"state"/);
      }
    });

    it("a rejected attempt does not burn the nonce", async () => {
      const template = await requestNonce(url, alice.address);
      const message = siweMessageFor(alice.address, template);
      const forged = await bob.signMessage(message);
      expectError(
        await post(url, "/auth/verify", { address: alice.address, message, signature: forged }),
        401,
        "invalid_signature",
      );
      const response = await post(url, "/auth/verify", await signed(alice, template));
      expect(response.status).to.equal(200);
    });
  });

  describe("POST /auth/refresh", () => {
    it("rotates: a new pair each time, and the new tokens work", async () => {
      const first = await signIn(url, alice);
      t.clock.advance(60);
      const second = await post(url, "/auth/refresh", { refresh_token: first.refresh_token });
      expect(second.status, JSON.stringify(second.body)).to.equal(200);
      expect(second.body.refresh_token).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(second.body.refresh_token).to.not.equal(first.refresh_token);
      expect(second.body.expires_in).to.equal(900);
      const claims = decodeJwt(second.body.access_token);
      expect(claims.sub).to.equal(alice.address);
      expect(claims.iat).to.equal(T0 + 60);
      const whoami = await request(url, "GET", "/test/whoami", {
        headers: { authorization: `Bearer ${second.body.access_token}` },
      });
      expect(whoami.status).to.equal(200);
      const third = await post(url, "/auth/refresh", { refresh_token: second.body.refresh_token });
      expect(third.status).to.equal(200);
    });

    it("reuse of a rotated token is 401 and revokes the whole family", async () => {
      const first = await signIn(url, alice);
      const other = await signIn(url, alice); // a separate session must survive
      const second = await post(url, "/auth/refresh", { refresh_token: first.refresh_token });
      expect(second.status).to.equal(200);

      expectError(
        await post(url, "/auth/refresh", { refresh_token: first.refresh_token }),
        401,
        "refresh_token_reused",
      );
      // The legitimate successor is dead too: the thief and the owner cannot be told apart.
      expectError(
        await post(url, "/auth/refresh", { refresh_token: second.body.refresh_token }),
        401,
        "refresh_token_revoked",
      );
      expect((await post(url, "/auth/refresh", { refresh_token: other.refresh_token })).status).to.equal(200);
    });

    it("401 once the refresh token has expired", async () => {
      const tokens = await signIn(url, alice);
      t.clock.advance(30 * 24 * 60 * 60);
      expectError(
        await post(url, "/auth/refresh", { refresh_token: tokens.refresh_token }),
        401,
        "refresh_token_expired",
      );
    });

    it("401 for an unknown or garbage token, 400 when missing", async () => {
      const unknown = Buffer.alloc(32, 7).toString("base64url");
      expectError(await post(url, "/auth/refresh", { refresh_token: unknown }), 401, "invalid_refresh_token");
      expectError(
        await post(url, "/auth/refresh", { refresh_token: "garbage" }),
        401,
        "invalid_refresh_token",
      );
      expectError(await post(url, "/auth/refresh", {}), 400, "invalid_request");
      expectError(await post(url, "/auth/refresh", { refresh_token: 5 }), 400, "invalid_request");
    });
  });

  describe("POST /auth/logout", () => {
    it("204, and the session's refresh tokens stop working", async () => {
      const tokens = await signIn(url, alice);
      const rotated = await post(url, "/auth/refresh", { refresh_token: tokens.refresh_token });
      const response = await post(url, "/auth/logout", { refresh_token: rotated.body.refresh_token });
      expect(response.status).to.equal(204);
      expect(response.body).to.equal(undefined);
      expectError(
        await post(url, "/auth/refresh", { refresh_token: rotated.body.refresh_token }),
        401,
        "refresh_token_revoked",
      );
    });

    it("is idempotent and silent about unknown tokens; 400 when the field is missing", async () => {
      const tokens = await signIn(url, alice);
      expect((await post(url, "/auth/logout", { refresh_token: tokens.refresh_token })).status).to.equal(204);
      expect((await post(url, "/auth/logout", { refresh_token: tokens.refresh_token })).status).to.equal(204);
      expect((await post(url, "/auth/logout", { refresh_token: "unknown" })).status).to.equal(204);
      expectError(await post(url, "/auth/logout", {}), 400, "invalid_request");
    });
  });

  describe("requireAccessToken", () => {
    const whoami = (authorization?: string) =>
      request(url, "GET", "/test/whoami", { headers: authorization ? { authorization } : {} });

    it("passes a valid token and exposes the principal", async () => {
      const tokens = await signIn(url, alice);
      const response = await whoami(`Bearer ${tokens.access_token}`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ wallet: alice.address, scopes: [SCOPE_ISSUE_GUARANTEES] });
    });

    it("401 without an Authorization header", async () => {
      const response = await whoami();
      expectError(response, 401, "missing_token");
      expect(response.headers.get("www-authenticate")).to.match(/^Bearer realm="surety"/);
    });

    it("401 for a garbage token or a non-Bearer scheme", async () => {
      for (const header of ["Bearer garbage", "Bearer a.b.c", "Basic dXNlcjpwYXNz", "Bearer"]) {
        const response = await whoami(header);
        expectError(response, 401, "invalid_token");
        expect(response.headers.get("www-authenticate")).to.match(
          /^Bearer realm="surety", error="invalid_token"/,
        );
      }
    });

    it("401 for a token signed with another key", async () => {
      const forged = await new SignJWT({ scopes: [SCOPE_ISSUE_GUARANTEES] })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(alice.address)
        .setIssuer(t.config.jwtIssuer)
        .setAudience(t.config.jwtAudience)
        .setIssuedAt(T0)
        .setExpirationTime(T0 + 900)
        .setJti("forged")
        .sign(new TextEncoder().encode("another-secret-that-is-32-bytes-long!!"));
      expectError(await whoami(`Bearer ${forged}`), 401, "invalid_token");
    });

    it("401 once the token has expired", async () => {
      const tokens = await signIn(url, alice);
      t.clock.advance(899);
      expect((await whoami(`Bearer ${tokens.access_token}`)).status).to.equal(200);
      t.clock.advance(1);
      const response = await whoami(`Bearer ${tokens.access_token}`);
      expectError(response, 401, "token_expired");
      expect(response.headers.get("www-authenticate")).to.include('error="invalid_token"');
    });
  });
});

describe("issuance authority (canIssueFor)", () => {
  const config = { facilitators: [facilitator.address] };
  const principal = (wallet: string, scopes = [SCOPE_ISSUE_GUARANTEES]) => ({
    wallet,
    scopes,
    tokenId: "t",
    expiresAt: T0 + 900,
  });

  it("a wallet may issue for itself only", () => {
    expect(canIssueFor(config, principal(alice.address), alice.address.toLowerCase())).to.equal(true);
    expect(canIssueFor(config, principal(alice.address), bob.address)).to.equal(false);
  });

  it("a configured facilitator may issue for any recipient", () => {
    expect(canIssueFor(config, principal(facilitator.address), alice.address)).to.equal(true);
    expect(canIssueFor(config, principal(facilitator.address), bob.address)).to.equal(true);
  });

  it("nobody issues without the issuance scope", () => {
    expect(canIssueFor(config, principal(alice.address, []), alice.address)).to.equal(false);
    expect(canIssueFor(config, principal(facilitator.address, []), bob.address)).to.equal(false);
  });
});
