import js from "@eslint/js";
import tseslint from "typescript-eslint";
import importPlugin from "eslint-plugin-import";

/** Node built-ins the pure protocol in sdk/ may not use: anything that does I/O (crypto primitives are allowed). */
const NODE_IO = [
  "fs",
  "http",
  "https",
  "http2",
  "net",
  "tls",
  "dgram",
  "child_process",
  "worker_threads",
  "os",
];
const nodeIoPatterns = NODE_IO.flatMap((name) => [name, `node:${name}`, `node:${name}/*`]);

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "artifacts/",
      "cache/",
      "typechain-types/",
      "coverage/",
      "dist/",
      "console/dist/",
      "packages/*/dist/",
      "examples/packaged-app/dist/",
      ".data/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-unused-expressions": "off", // chai's `expect(x).to.be.true`
      eqeqeq: ["error", "always"],
    },
  },
  // The native BLS addon's build script and loader: plain CommonJS run by Node (npm's postinstall).
  {
    files: ["native/**/*.js"],
    languageOptions: {
      sourceType: "commonjs",
      globals: {
        require: "readonly",
        module: "writable",
        process: "readonly",
        console: "readonly",
        __dirname: "readonly",
      },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  // The layers of docs/architecture.md, "Layers and what may import what": no import cycle in the
  // code of the services and the sdk (type-only imports are erased at compile time and not counted).
  {
    files: ["operator/**/*.ts", "facilitator/**/*.ts", "runtime/**/*.ts", "sdk/**/*.ts"],
    plugins: { import: importPlugin },
    settings: {
      "import/resolver": { node: { extensions: [".ts", ".js", ".json"] } },
      // Dependencies are parsed to follow their imports; .ts needs the TypeScript parser.
      "import/parsers": { "@typescript-eslint/parser": [".ts"] },
      "import/extensions": [".ts", ".js"],
    },
    rules: { "import/no-cycle": ["error", { ignoreExternal: true }] },
  },
  // The facilitator speaks to Core over HTTP only; shared plumbing is in runtime/.
  {
    files: ["facilitator/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/operator", "**/operator/**"],
              message: "facilitator/ imports sdk/ and runtime/, never operator/",
            },
          ],
        },
      ],
    },
  },
  // runtime/ and the pure protocol import nothing of the services.
  {
    files: ["runtime/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/operator/**", "**/facilitator/**", "**/sdk/**"],
              message: "runtime/ imports nothing of ours",
            },
          ],
        },
      ],
    },
  },
  // sdk/'s pure protocol: no node built-in beyond the crypto primitives, no network, no HTTP framework,
  // nothing of the services and none of the sdk's I/O kits (sdk/kits/: buyer and seller scheme, paywall,
  // webhook receiver).
  {
    files: ["sdk/**/*.ts"],
    ignores: ["sdk/kits/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["node:*", "!node:crypto"], message: "the pure sdk uses no node built-in but crypto" },
            { group: nodeIoPatterns, message: "the pure sdk does no I/O (only crypto primitives)" },
            { group: ["express", "express/*", "@x402/*"], message: "the pure sdk knows no HTTP framework" },
            {
              group: ["**/operator/**", "**/facilitator/**", "**/runtime/**", "**/scripts/**"],
              message: "sdk/ imports nothing of the services",
            },
            {
              group: ["**/kits", "**/kits/**"],
              message: "the pure protocol does not import the sdk's I/O kits",
            },
          ],
        },
      ],
    },
  },
  // The sdk's kits (sdk/kits/) do I/O on top of the pure protocol, and import nothing of the services.
  {
    files: ["sdk/kits/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/operator/**", "**/facilitator/**", "**/runtime/**", "**/scripts/**"],
              message: "sdk/kits/ imports the pure sdk, nothing of the services",
            },
          ],
        },
      ],
    },
  },
);
