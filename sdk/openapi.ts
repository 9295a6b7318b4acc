/**
 * OpenAPI components from zod schemas: zod's own JSON Schema 2020-12 output (`z.toJSONSchema` over a
 * registry), each schema named, the others referred to as `#/components/schemas/<name>`. Core's and the
 * facilitator's documents are built with it (`sdk/core-api.ts`, `sdk/api-facilitator.ts`).
 */
import { z } from "zod/v4";

/** JSON Schema (2020-12) of named zod schemas, referring to each other as `#/components/schemas/<name>`. */
export function openApiComponents(schemas: ReadonlyMap<string, z.ZodType>): Record<string, object> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of schemas) registry.add(schema, { id });
  const { schemas: generated } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
  });
  // Each comes as a document of its own; as a component it is only the schema.
  return Object.fromEntries(
    Object.entries(generated).map(([id, schema]) => {
      const { $schema, $id, ...rest } = schema;
      void $schema;
      void $id;
      return [id, rest];
    }),
  );
}
