/**
 * The generated OpenAPI documents promise what the hand-written ones did: the same operations, parameters,
 * status codes and, for every request and answer body, the same field names and required fields. The
 * outlines in outlines/*.json were taken from the hand-written documents before they were replaced by the
 * ones generated from the sdk's schemas; a deliberate change of the API changes them in the same commit.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import path from "node:path";
import { CORE_OPENAPI } from "../../operator/api/openapi-document";
import { FACILITATOR_OPENAPI } from "../../facilitator/api/openapi-document";
import { outline } from "./outline";

const recorded = (name: string): unknown =>
  JSON.parse(readFileSync(path.join(__dirname, "outlines", `${name}.json`), "utf8"));

describe("OpenAPI documents against their recorded outlines", () => {
  for (const [name, document] of [
    ["core", CORE_OPENAPI],
    ["facilitator", FACILITATOR_OPENAPI],
  ] as const) {
    it(`${name}: same operations, parameters, status codes, fields and required fields`, () => {
      expect(outline(document)).to.deep.equal(recorded(name));
    });
  }
});
