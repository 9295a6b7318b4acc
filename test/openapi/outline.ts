/**
 * What an OpenAPI document promises a client, without its wording: every operation, whether it needs a
 * bearer token, its parameters, its request body's fields and each status code's body fields, as
 * "path.to.field" (`[]` for array items, `!` when required), and the values a field is limited to
 * ("path.to.field=value": error codes, states). Schemas are resolved ($ref, allOf; the branches of anyOf / oneOf are merged), so two
 * documents that spell the same shapes differently have the same outline. Used to prove that the generated
 * documents promise what the hand-written ones did (test/openapi/outlines/*.json).
 */
/* eslint-disable @typescript-eslint/no-explicit-any */

export type Outline = Record<
  string,
  { security: boolean; parameters: string[]; request: string[]; responses: Record<string, string[]> }
>;

function fields(doc: any, schema: any, prefix: string, out: Set<string>, depth = 0): void {
  if (!schema || typeof schema !== "object" || depth > 12) return;
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "");
    fields(doc, doc.components.schemas[name], prefix, out, depth + 1);
  }
  for (const key of ["allOf", "anyOf", "oneOf"]) {
    for (const branch of schema[key] ?? []) fields(doc, branch, prefix, out, depth + 1);
  }
  for (const value of [...(schema.enum ?? []), ...("const" in schema ? [schema.const] : [])]) {
    out.add(`${prefix}=${JSON.stringify(value)}`);
  }
  if (schema.items && typeof schema.items === "object")
    fields(doc, schema.items, `${prefix}[]`, out, depth + 1);
  for (const [i, item] of (schema.prefixItems ?? []).entries())
    fields(doc, item, `${prefix}[${i}]`, out, depth + 1);
  const required = new Set<string>(schema.required ?? []);
  for (const [name, inner] of Object.entries(schema.properties ?? {})) {
    const path = prefix === "" ? name : `${prefix}.${name}`;
    out.add(required.has(name) ? `${path}!` : path);
    fields(doc, inner, path, out, depth + 1);
  }
}

function fieldList(doc: any, schema: any): string[] {
  const out = new Set<string>();
  fields(doc, schema, "", out);
  // A field required in one branch and optional in another is listed once, required.
  return [...out].filter((f) => f.endsWith("!") || !out.has(`${f}!`)).sort();
}

export function outline(doc: any): Outline {
  const result: Outline = {};
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      const responses: Record<string, string[]> = {};
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        const media = response.content?.["application/json"] ?? Object.values(response.content ?? {})[0];
        responses[status] = media ? fieldList(doc, (media as any).schema) : [];
      }
      result[`${method.toUpperCase()} ${path}`] = {
        security: (op.security ?? []).length > 0,
        parameters: (op.parameters ?? []).map((p: any) => `${p.in}:${p.name}${p.required ? "!" : ""}`).sort(),
        request: op.requestBody ? fieldList(doc, op.requestBody.content["application/json"].schema) : [],
        responses,
      };
    }
  }
  return result;
}
