/**
 * Bodies and parameters for bench:fuzz built from the OpenAPI document's schemas: a body the
 * schema accepts (so a probe gets past validation into the handler), the numeric and date fields
 * of that body wherever they nest, and values for path parameters.
 */

export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  [key: string]: unknown;
}

export const FUZZ_ID = "00000000-0000-4000-8000-000000000000";

export function typesOf(schema: Schema | undefined): string[] {
  if (!schema) return [];
  return [schema.type ?? [], ...(schema.anyOf ?? []).map(typesOf)].flat() as string[];
}

const numeric = (schema: Schema) => typesOf(schema).some((t) => t === "integer" || t === "number");

/** A field whose name says it holds a date or a time (the schemas type them as plain strings). */
export const dateLike = (name: string) => /(^|_)(date|from|to|at|before|after|since|until|between)(_|$)|taken/.test(name);

/** A value the schema accepts, as far as a schema tells (formats the document names, enums, lengths, bounds). */
export function validValue(schema: Schema | undefined, name = ""): unknown {
  if (!schema) return "x";
  if (schema.enum?.length) return schema.enum[0];
  const choice = (schema.anyOf ?? []).find((s) => !typesOf(s).includes("null")) ?? schema.anyOf?.[0];
  if (!schema.type && choice) return validValue(choice, name);
  const types = typesOf(schema).filter((t) => t !== "null");
  const type = types.includes("object") ? "object" : types.includes("array") ? "array" : types.includes("integer") || types.includes("number") ? "number" : (types[0] ?? "string");
  switch (type) {
    case "object":
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, field]) => [key, validValue(field, key)]));
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => validValue(schema.items, name));
    case "number":
      return Math.max(schema.minimum ?? 1, Math.min(schema.maximum ?? 1, 1));
    case "boolean":
      return true;
    default: {
      if (schema.format === "uuid" || String(schema.pattern ?? "").includes("{8}-")) return FUZZ_ID;
      if (/email/.test(name)) return "fuzz@example.com";
      if (/url|uri/.test(name)) return "https://example.com/";
      if (dateLike(name)) return "2024-01-01T00:00:00Z";
      return "x".repeat(Math.max(1, schema.minLength ?? 1));
    }
  }
}

/** Where the numeric (or date) fields of a body built by validValue sit: paths of keys and indexes. */
export function leaves(schema: Schema | undefined, wanted: (schema: Schema, name: string) => boolean, name = "", at: (string | number)[] = []): (string | number)[][] {
  if (!schema) return [];
  const choice = !schema.type && !schema.enum ? ((schema.anyOf ?? []).find((s) => !typesOf(s).includes("null")) ?? null) : null;
  if (choice && !numeric(schema)) return leaves(choice, wanted, name, at);
  if (at.length && wanted(schema, name)) return [at];
  const types = typesOf(schema);
  if (types.includes("object")) return Object.entries(schema.properties ?? {}).flatMap(([key, field]) => leaves(field, wanted, key, [...at, key]));
  if (types.includes("array")) return leaves(schema.items, wanted, name, [...at, 0]);
  return [];
}

export const numericLeaf = (schema: Schema) => numeric(schema);
export const dateLeaf = (schema: Schema, name: string) => !numeric(schema) && typesOf(schema).includes("string") && dateLike(name);

/** A copy of `body` with the value at `path` replaced by a placeholder that the caller swaps for raw JSON text. */
export function withRaw(body: unknown, path: (string | number)[], raw: string): string {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path.at(-1)!] = "__RAW__";
  return JSON.stringify(copy).replace('"__RAW__"', raw);
}

/** The schema of a numeric leaf, to read its bounds. */
export function leafSchema(schema: Schema | undefined, path: (string | number)[]): Schema | undefined {
  let node = schema;
  for (const key of path) {
    if (!node) return undefined;
    const choice = !node.type && !node.enum ? ((node.anyOf ?? []).find((s) => !typesOf(s).includes("null")) ?? node) : node;
    node = typeof key === "number" ? choice.items : choice.properties?.[key];
  }
  return node;
}

/** Bounds of a numeric schema (its integer branch when it also takes a string). */
export function boundsOf(schema: Schema | undefined): { min: number | undefined; max: number | undefined } {
  if (!schema) return { min: undefined, max: undefined };
  const branch = (schema.anyOf ?? []).find((s) => numeric(s) && !typesOf(s).includes("string"));
  return { min: schema.minimum ?? branch?.minimum, max: schema.maximum ?? branch?.maximum };
}
