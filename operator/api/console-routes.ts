/**
 * The operator console (docs/console.md): the static build of `console/` (`npm run console:build` writes
 * `console/dist/`), served at `/console/`. It reads only Core's public endpoints, same-origin, so it needs
 * no CORS and no credentials. The build is generated, not committed: when it is missing, `/console/`
 * answers 503 with a page that says how to build it, instead of a bare 404.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import express, { Router } from "express";
import { PACKAGE_ROOT } from "../../runtime/package-root";
import type { RouteModule } from "./context";

/** Where `npm run console:build` writes the console. */
export const CONSOLE_DIST_DIR = path.join(PACKAGE_ROOT, "console", "dist");

/** URL prefix of the console. */
export const CONSOLE_PATH = "/console";

/**
 * Everything the page loads comes from Core itself (bundled scripts and styles, same-origin reads): the
 * policy forbids any other origin, inline script and framing.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Surety console: not built</title></head>
<body><h1>The Surety console is not built</h1>
<p>This Core serves the console from <code>console/dist/</code>, which is generated. Build it in the
repository with <code>npm run console:build</code> (<code>npm run devnet</code> and
<code>npm run operator</code> do it first), then reload this page.</p></body></html>
`;

/** The console router over `dir` (tests point it at a directory of their own). */
export function consoleRouter(dir: string = CONSOLE_DIST_DIR): Router {
  const router = Router();
  const serve = express.static(dir, {
    index: "index.html",
    redirect: true, // /console → /console/
    setHeaders(res, file) {
      // Vite names assets by content hash: they never change. index.html names the current ones.
      const hashed = file.includes(`${path.sep}assets${path.sep}`);
      res.setHeader("Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  router.use(CONSOLE_PATH, (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    res.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    res.setHeader("X-Content-Type-Options", "nosniff");
    // Checked per request: a build made while Core runs is served without a restart.
    if (!existsSync(path.join(dir, "index.html"))) {
      res.status(503).type("html").setHeader("Cache-Control", "no-store").send(NOT_BUILT_PAGE);
      return;
    }
    serve(req, res, next);
  });
  return router;
}

export const consoleRoutes: RouteModule = () => consoleRouter();
