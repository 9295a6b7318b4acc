/**
 * Build of the operator console (docs/console.md): `npm run console:build` writes `console/dist/`, which Core
 * serves at `/console/`. Everything is bundled (no CDN), so the page works offline.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Core serves the build under /console/: asset URLs must carry that prefix.
  base: "/console/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Browsers of operators, not of the general public: no legacy transforms.
    target: "es2022",
  },
  logLevel: "warn",
});
