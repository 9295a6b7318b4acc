/**
 * Checks real HTTP answers against an OpenAPI 3.1 document: the response
 * schema of (method, path template, status) is compiled with Ajv's JSON
 * Schema 2020-12 dialect (the dialect of OpenAPI 3.1) and the body validated
 * against it. Also records which operations were exercised, so a test can
 * assert that every documented path was called.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** `#/components/schemas/X` → `#/$defs/X`, so each response schema compiles on its own with the components. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        key === "$ref" && typeof inner === "string"
          ? inner.replace("#/components/schemas/", "#/$defs/")
          : rewriteRefs(inner),
      ]),
    );
  }
  return value;
}

export interface CheckedResponse {
  status: number;
  body: unknown;
  headers?: Headers;
}

export class OpenApiChecker {
  private readonly ajv: Ajv2020;
  private readonly defs: unknown;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** "METHOD path status" of every checked answer. */
  readonly exercised = new Set<string>();

  constructor(readonly document: any) {
    this.ajv = new Ajv2020({ strict: true, allErrors: true, strictTuples: false });
    this.ajv.addFormat(
      "date-time",
      (value: string) => ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)),
    );
    this.ajv.addFormat("uri", (value: string) => URL.canParse(value));
    this.defs = rewriteRefs(document.components?.schemas ?? {});
  }

  /** Every (method, path) the document describes, as "METHOD path". */
  operations(): string[] {
    return Object.entries(this.document.paths as Record<string, Record<string, unknown>>).flatMap(
      ([p, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${p}`),
    );
  }

  /** Every documented (method, path, status), as "METHOD path status". */
  documentedResponses(): string[] {
    return Object.entries(this.document.paths as Record<string, Record<string, any>>).flatMap(([p, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.keys(operation.responses).map((status) => `${method.toUpperCase()} ${p} ${status}`),
      ),
    );
  }

  /** Throws (with Ajv's errors and the body) unless the answer is documented and matches its schema. */
  check(method: string, pathTemplate: string, response: CheckedResponse): void {
    const key = `${method.toUpperCase()} ${pathTemplate} ${response.status}`;
    const operation = this.document.paths?.[pathTemplate]?.[method.toLowerCase()];
    if (!operation) throw new Error(`${method.toUpperCase()} ${pathTemplate} is not in the document`);
    const documented = operation.responses?.[String(response.status)];
    if (!documented) {
      throw new Error(`${key} is not documented (body ${JSON.stringify(response.body)})`);
    }
    const mediaType = Object.keys(documented.content ?? {})[0];
    if (mediaType === undefined) {
      if (response.body !== undefined && response.body !== "") {
        throw new Error(`${key} is documented without a body, got ${JSON.stringify(response.body)}`);
      }
    } else {
      let validate = this.compiled.get(key);
      if (!validate) {
        const schema = rewriteRefs(documented.content[mediaType].schema) as object;
        validate = this.ajv.compile({ $defs: this.defs, ...schema });
        this.compiled.set(key, validate);
      }
      if (response.headers) {
        const contentType = response.headers.get("content-type") ?? "";
        if (!contentType.startsWith(mediaType))
          throw new Error(`${key}: content-type ${contentType}, documented ${mediaType}`);
      }
      if (!validate(response.body)) {
        throw new Error(
          `${key}: body does not match the document:\n${JSON.stringify(validate.errors, null, 2)}\nbody: ${JSON.stringify(response.body)}`,
        );
      }
    }
    this.exercised.add(key);
  }

  /** Compiles every documented response schema (catches dangling $refs and schema mistakes). */
  compileAll(): number {
    let count = 0;
    for (const [p, item] of Object.entries(this.document.paths as Record<string, Record<string, any>>)) {
      for (const operation of Object.values(item)) {
        for (const documented of Object.values(operation.responses as Record<string, any>)) {
          for (const media of Object.values((documented.content ?? {}) as Record<string, any>)) {
            this.ajv.compile({ $defs: this.defs, ...(rewriteRefs(media.schema) as object) });
            count += 1;
          }
        }
        const body = operation.requestBody?.content?.["application/json"]?.schema;
        if (body) {
          this.ajv.compile({ $defs: this.defs, ...(rewriteRefs(body) as object) });
          count += 1;
        }
      }
      void p;
    }
    return count;
  }

  /** Validates a request body against the operation's documented request schema. */
  checkRequest(method: string, pathTemplate: string, body: unknown): boolean {
    const schema =
      this.document.paths[pathTemplate][method.toLowerCase()].requestBody.content["application/json"].schema;
    return this.ajv.compile({ $defs: this.defs, ...(rewriteRefs(schema) as object) })(body);
  }
}
