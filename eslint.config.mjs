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

/** operator/'s services and composition (everything but the store, the vocabulary and small leaf helpers). */
const OPERATOR_SERVICE_IMPORTS = [
  "**/api",
  "**/api/**",
  "**/app",
  "**/app/**",
  "**/auth/**",
  "**/chain/**",
  "**/clearing/**",
  "**/guarantees/**",
  "**/leadership/**",
  "**/lifecycle/**",
  "**/webhooks/**",
  "**/background",
  "**/background-state",
  "**/config",
  "**/health",
  "**/main",
  "**/metrics",
  "**/server",
  "**/startup",
];

/** The domain never reaches the HTTP layer or the composition root (docs/architecture.md, "Inside Core"). */
const NOT_COMPOSITION = {
  group: ["**/app", "**/app/**", "**/api", "**/api/**", "**/server", "**/main"],
  message:
    "the domain is handed its dependencies: it imports nothing of operator/app/, operator/api/, server or main",
};

/** The domain registers handlers with the indexer; it never imports the indexer or its dispatch. */
const NO_INDEXER = {
  group: ["**/chain/indexer", "**/chain/events"],
  message:
    "the domain registers handlers (chain/handlers.ts); it does not import the indexer or its dispatch",
};

/** Every guarantee state change goes through the transition table (operator/guarantees/transitions.ts). */
const NO_TRANSITION_CAS = {
  selector: "CallExpression[callee.property.name='transitionGuarantee']",
  message: "move a guarantee through GuaranteeTransitions.apply (operator/guarantees/transitions.ts)",
};

/** A domain module takes the store areas it uses, never the whole Store (docs/store.md, "Areas"). */
const NO_WHOLE_STORE = {
  selector: "ImportSpecifier[imported.name='Store']",
  message:
    'take only the store areas you use (StoreAreas<"area" | …> or Pick<Repositories, …>); the whole Store is the composition root\'s',
};

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
  // Inside operator/ (docs/architecture.md, "Inside Core"): the composition root (operator/app/) wires the
  // services, the HTTP layer (api/) mounts routes on them, server.ts and main.ts run them; nothing else
  // imports any of those. The blocks below repeat this rule for their folders (a later block's
  // no-restricted-imports replaces an earlier one's).
  {
    files: ["operator/**/*.ts"],
    ignores: ["operator/app/**", "operator/api/**", "operator/server.ts", "operator/main.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [NOT_COMPOSITION] }] },
  },
  // The store keeps data and imports of the domain only its vocabulary (states, the capacity rule, the
  // leaf hash); the vocabulary imports nothing of the store; the chain indexer reaches the domain only
  // through its event handlers (and the transition table they use), and the domain never reaches into the
  // indexer.
  {
    files: ["operator/store/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                ...OPERATOR_SERVICE_IMPORTS,
                "!**/guarantees/states",
                "!**/guarantees/capacity",
                "!**/guarantees/try-lock",
                "!**/clearing/leaf-hash",
              ],
              message:
                "the store imports of the domain only its vocabulary (states, capacity rule and check, leaf hash)",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["operator/chain/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "**/api",
                "**/api/**",
                "**/auth/**",
                "**/leadership/**",
                "**/guarantees/*",
                "**/clearing/*",
                "**/lifecycle/*",
                "!**/*-handlers",
                "!**/guarantees/transitions",
                "!**/guarantees/states",
              ],
              message:
                "chain/ reaches the domain only through its event handlers (*-handlers.ts) and the transition table",
            },
            NOT_COMPOSITION,
          ],
        },
      ],
    },
  },
  {
    files: [
      "operator/guarantees/**/*.ts",
      "operator/clearing/**/*.ts",
      "operator/lifecycle/**/*.ts",
      "operator/webhooks/**/*.ts",
      "operator/leadership/**/*.ts",
    ],
    rules: { "no-restricted-imports": ["error", { patterns: [NO_INDEXER, NOT_COMPOSITION] }] },
  },
  // The HTTP layer mounts routes on the services it is handed: of operator/app/ it reads the context
  // (the services' types) only, and it never imports the process entry points.
  {
    files: ["operator/api/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            NO_INDEXER,
            {
              group: ["**/app/*", "!**/app/context", "**/server", "**/main"],
              message:
                "api/ mounts routes on the context operator/app/ builds: of app/ it imports the context only, and never server or main",
            },
          ],
        },
      ],
    },
  },
  // The composition root (operator/app/) wires the services without HTTP: a background-only process
  // builds it and no Express app, so it imports nothing of the HTTP layer (api/ imports it, never the reverse).
  {
    files: ["operator/app/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "**/api",
                "**/api/**",
                "**/server",
                "**/main",
                "**/express-server",
                "**/client-errors",
                "express",
                "express/*",
                "express-validator",
              ],
              message:
                "operator/app/ knows no HTTP: api/ and server.ts mount routes on what it builds, never the reverse",
            },
          ],
        },
      ],
    },
  },
  {
    files: [
      "operator/guarantees/states.ts",
      "operator/guarantees/capacity.ts",
      "operator/guarantees/try-lock.ts",
      "operator/guarantees/transitions.ts",
      "operator/clearing/leaf-hash.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/store", "**/store/**", "**/chain/**"],
              message:
                "the domain's vocabulary imports nothing of the store or the chain (the store imports it)",
            },
            NOT_COMPOSITION,
          ],
        },
      ],
    },
  },
  // Every guarantee state change goes through the transition table (operator/guarantees/transitions.ts);
  // only the table, the indexer's journal (which records the inverse for a rewind) and the store call the
  // store's compare-and-set.
  // Each consumer is given only the store areas it uses (StoreAreas<…>, Pick<Repositories, …>): the whole
  // Store is held by the composition root (operator/app/), the background work's wiring (background.ts,
  // leadership/, which hand a term its fenced store) and the store itself.
  {
    files: ["operator/**/*.ts"],
    ignores: ["operator/store/**", "operator/guarantees/transitions.ts", "operator/chain/journal.ts"],
    rules: {
      "no-restricted-syntax": ["error", NO_TRANSITION_CAS, NO_WHOLE_STORE],
    },
  },
  {
    files: ["operator/guarantees/transitions.ts", "operator/chain/journal.ts"],
    rules: { "no-restricted-syntax": ["error", NO_WHOLE_STORE] },
  },
  {
    files: ["operator/app/**/*.ts", "operator/background.ts", "operator/leadership/**/*.ts"],
    rules: { "no-restricted-syntax": ["error", NO_TRANSITION_CAS] },
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
            { group: ["express", "express/*"], message: "the pure sdk knows no HTTP framework" },
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
      // x402's shapes are its packages' types (sdk/x402.ts): a type-only import loads nothing.
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@x402/*"],
              allowTypeImports: true,
              message: "the pure sdk loads no x402 package (it may import their types)",
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
