import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clockPassed } from "./support/polling.ts";
import { startTestServer, type ApiClient, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** CUSTOM tier: unlimited requests, so the long tables below never hit 429. */
const newTenant = (): Promise<Tenant> => server.tenant({ tier: "CUSTOM" });

const PATH = "/custom-extraction-schemas";

const INVOICE = {
  type: "object",
  description: "An invoice",
  properties: {
    number: { type: "string", description: "Invoice number" },
    total: { type: "number" },
    currency: { type: "string", enum: ["EUR", "USD"] },
    paid: { type: "boolean" },
  },
  required: ["number", "total"],
};

/** `{type: "object", properties: {...}}` with the given properties. */
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: "object", properties, ...extra });
const str = { type: "string" };
/** n string properties named p0..p(n-1). */
const strings = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, str]));

describe("POST /custom-extraction-schemas", () => {
  test("201 with the full resource; name trimmed; field_count counts the leaves", async () => {
    const { api } = await newTenant();
    const res = await api.post(PATH, { name: "  Invoices  ", description: "Supplier invoices", schema: INVOICE, prompt_hint: "Read the totals" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: "Invoices",
      description: "Supplier invoices",
      schema: INVOICE,
      prompt_hint: "Read the totals",
      field_count: 4,
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.created_by).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(res.body.created_at)).not.toBeNaN();
    expect(res.body.updated_at).toBe(res.body.created_at);

    const fetched = await api.get(`${PATH}/${res.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(res.body);
  });

  test("description and prompt_hint are optional and default to null", async () => {
    const res = await (await newTenant()).api.post(PATH, { name: "Bare", schema: obj({ a: str }) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ description: null, prompt_hint: null, field_count: 1 });
  });

  test("name, description and prompt_hint refusals carry their own codes", async () => {
    const { api } = await newTenant();
    const schema = obj({ a: str });
    const cases: [string, Record<string, unknown>, string, string][] = [
      ["blank name", { name: "   " }, "CUSTOM_SCHEMA_INVALID_NAME", "name"],
      ["empty name", { name: "" }, "CUSTOM_SCHEMA_INVALID_NAME", "name"],
      ["name of 256", { name: "n".repeat(256) }, "CUSTOM_SCHEMA_INVALID_NAME", "255"],
      ["control character in name", { name: "a\u0007b" }, "CUSTOM_SCHEMA_INVALID_NAME", "name"],
      ["description of 1001", { name: "ok", description: "d".repeat(1001) }, "CUSTOM_SCHEMA_INVALID_DESCRIPTION", "1000"],
      ["prompt_hint of 2001", { name: "ok", prompt_hint: "p".repeat(2001) }, "CUSTOM_SCHEMA_INVALID_PROMPT_HINT", "2000"],
    ];
    for (const [label, fields, code, detail] of cases) {
      const res = await api.post(PATH, { schema, ...fields });
      expect(res.status, label).toBe(400);
      expect(res.body.code, label).toBe(code);
      expect(res.body.detail, label).toContain(detail);
    }
    for (const [label, body] of [
      ["missing name", { schema }],
      ["name not a string", { name: 42, schema }],
      ["description not a string", { name: "ok", description: 5, schema }],
      ["missing schema", { name: "ok" }],
    ] as const) {
      const res = await api.post(PATH, body);
      expect(res.status, label).toBe(400);
      expect(res.body.detail, label).toMatch(/name|description|schema/);
    }
    expect((await api.get(PATH)).body.total_count).toBe(0);
  });

  test("values at the limits are accepted: 255-character name, 1000 description, 2000 prompt_hint", async () => {
    const res = await (await newTenant()).api.post(PATH, {
      name: "n".repeat(255),
      description: "d".repeat(1000),
      prompt_hint: "p".repeat(2000),
      schema: obj({ a: str }),
    });
    expect(res.status).toBe(201);
    expect(res.body.name.length).toBe(255);
  });

  test("names are unique per organization, case-insensitively: 400 CUSTOM_SCHEMA_NAME_EXISTS (the spec's status)", async () => {
    const tenant = await newTenant();
    expect((await tenant.api.post(PATH, { name: "Receipts", schema: INVOICE })).status).toBe(201);
    for (const name of ["receipts", "RECEIPTS", "  Receipts "]) {
      const res = await tenant.api.post(PATH, { name, schema: INVOICE });
      expect(res.status, name).toBe(400);
      expect(res.body.code, name).toBe("CUSTOM_SCHEMA_NAME_EXISTS");
      expect(res.body.detail, name).toContain("Receipts");
    }
    expect((await tenant.api.get(PATH)).body.total_count).toBe(1);
    // Another organization may use the same name.
    expect((await (await newTenant()).api.post(PATH, { name: "Receipts", schema: INVOICE })).status).toBe(201);
  });
});

describe("schema validation", () => {
  // Each case: the schema, then fragments the detail must contain (the JSON path and the rule).
  const invalid: [string, unknown, string[]][] = [
    ["root type not object", { type: "array", items: str }, ["schema.type", 'root type must be "object"']],
    ["empty schema", {}, ["schema.type", 'root type must be "object"']],
    ["root without properties", { type: "object" }, ["schema.properties", "at least one property"]],
    ["root is a string", "object", ["schema: must be a JSON object"]],
    ["root is an array", [INVOICE], ["schema: must be a JSON object"]],
    ["root is a number", 42, ["schema: must be a JSON object"]],
    ["root is null", null, ["schema: must be a JSON object"]],
    ["depth 4", obj({ a: obj({ b: obj({ c: obj({ d: str }) }) }) }), ["schema.properties.a.properties.b.properties.c", "maximum depth is 3"]],
    [
      "depth 4 through array items",
      obj({ a: obj({ list: { type: "array", items: obj({ b: obj({ c: str }) }) } }) }),
      ["schema.properties.a.properties.list.items.properties.b", "maximum depth is 3"],
    ],
    ["51 properties", obj(strings(51)), ["schema.properties", "at most 50 properties per object", "got 51"]],
    [
      "201 nodes",
      obj(Object.fromEntries([0, 1, 2, 3].map((i) => [`o${i}`, obj(strings(49))]))),
      ["at most 200 schema nodes", "got 201"],
    ],
    ["over 32 KB", obj({ a: { type: "string", description: "x".repeat(33_000) } }), ["32768 bytes", "schema"]],
    ['type "null"', obj({ a: { type: "null" } }), ["schema.properties.a.type", 'type "null" is not supported']],
    ['type "date"', obj({ a: { type: "date" } }), ["schema.properties.a.type", 'type "date" is not supported', "format"]],
    ["type as a list", obj({ a: { type: ["string", "integer"] } }), ["schema.properties.a.type", "use anyOf"]],
    ["no type", obj({ a: { description: "what?" } }), ["schema.properties.a", "must declare a type"]],
    ["$ref", obj({ a: { $ref: "#/definitions/x" } }), ["schema.properties.a.$ref", "$ref is not allowed", "inline"]],
    ["$defs", obj({ a: str }, { $defs: { x: str } }), ["schema.$defs", "$defs/definitions are not allowed"]],
    ["definitions", obj({ a: str }, { definitions: { x: str } }), ["schema.definitions", "$defs/definitions are not allowed"]],
    ["allOf", obj({ a: { allOf: [str] } }), ["schema.properties.a.allOf", "allOf is not allowed", "anyOf"]],
    ["oneOf", obj({ a: { oneOf: [str, { type: "integer" }] } }), ["schema.properties.a.oneOf", "oneOf is not allowed"]],
    ["not", obj({ a: { type: "string", not: { enum: ["x"] } } }), ["schema.properties.a.not", "not is not allowed"]],
    ["if/then/else", obj({ a: str }, { if: { required: ["a"] }, then: {}, else: {} }), ["schema.if", "if/then/else"]],
    ["patternProperties", obj({ a: str }, { patternProperties: { "^x": str } }), ["schema.patternProperties", "not allowed"]],
    ["required not an array", obj({ a: str }, { required: "a" }), ["schema.required", "must be array"]],
    ["required of non-strings", obj({ a: str }, { required: [1] }), ["schema.required[0]", "must be string"]],
    ["required names an undeclared property", obj({ a: str }, { required: ["b"] }), ["schema.required", '"b" is not one of the declared properties']],
    ["enum not an array", obj({ a: { type: "string", enum: "EUR" } }), ["schema.properties.a.enum", "must be array"]],
    ["enum value of the wrong type", obj({ a: { type: "string", enum: ["EUR", 1] } }), ["schema.properties.a.enum", "type string"]],
    [
      "array items with a forbidden keyword",
      obj({ list: { type: "array", items: obj({ x: str }, { oneOf: [{ required: ["x"] }] }) } }),
      ["schema.properties.list.items.oneOf", "oneOf is not allowed"],
    ],
    ["array without items", obj({ list: { type: "array" } }), ["schema.properties.list", "must declare items"]],
    ["tuple items", obj({ list: { type: "array", items: [str] } }), ["schema.properties.list.items", "tuple"]],
    ["unknown keyword (strict mode)", obj({ a: { type: "string", colour: "red" } }), ["schema.properties.a.colour", 'unknown keyword "colour"']],
    ["keyword for another type (strict types)", obj({ a: { type: "string", minimum: 1 } }), ["schema.properties.a", "minimum"]],
    ["maxLength not a number", obj({ a: { type: "string", maxLength: "ten" } }), ["schema.properties.a.maxLength", "must be integer"]],
    ["invalid pattern", obj({ a: { type: "string", pattern: "([" } }), ["schema.properties.a.pattern", "regular expression"]],
    ["additionalProperties as a schema", obj({ a: str }, { additionalProperties: str }), ["schema.additionalProperties", "true or false"]],
    ["nullable", obj({ a: { type: "string", nullable: true } }), ["schema.properties.a.nullable", '"null" is not an allowed type']],
    ["property schema not an object", obj({ a: "string" }), ["schema.properties.a", "must be a JSON Schema object"]],
    ["anyOf branch without a type", obj({ a: { anyOf: [str, { description: "?" }] } }), ["schema.properties.a.anyOf[1]", "must declare a type"]],
    ["anyOf not an array", obj({ a: { anyOf: str } }), ["schema.properties.a.anyOf", "must be array"]],
    ["other meta-schema", { $schema: "https://json-schema.org/draft/2020-12/schema", ...obj({ a: str }) }, ["schema.$schema", "draft-07"]],
    ["odd property names are quoted in the path", obj({ "zip code": { type: "nope" } }), ['schema.properties["zip code"].type']],
  ];

  test.each(invalid)("%s is 400 CUSTOM_SCHEMA_INVALID_SCHEMA naming the problem", async (_label, schema, fragments) => {
    const { api } = await newTenant();
    const res = await api.post(PATH, { name: "Candidate", schema });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("CUSTOM_SCHEMA_INVALID_SCHEMA");
    for (const fragment of fragments) expect(res.body.detail).toContain(fragment);
    expect((await api.get(PATH)).body.total_count).toBe(0);
  });

  // Each case: the schema and its expected field_count.
  const valid: [string, unknown, number][] = [
    ["nested objects to depth 3", obj({ a: obj({ b: obj({ c: str, d: { type: "integer" } }) }), e: str }), 3],
    [
      "array of objects (the item object is depth 2)",
      obj({ lines: { type: "array", items: obj({ sku: str, qty: { type: "integer" }, price: { type: "number" } }, { required: ["sku"] }) } }),
      3,
    ],
    ["array of objects holding an object (depth 3)", obj({ lines: { type: "array", items: obj({ dims: obj({ w: str, h: str }) }) } }), 2],
    ["array of scalars is one field", obj({ tags: { type: "array", items: str, minItems: 1 } }), 1],
    ["enum, required and description", INVOICE, 4],
    ["anyOf of scalar types", obj({ amount: { anyOf: [{ type: "number" }, { type: "string", pattern: "^[0-9.]+$" }] } }), 1],
    ["anyOf of required sets on an object", obj({ email: str, phone: str }, { anyOf: [{ required: ["email"] }, { required: ["phone"] }] }), 2],
    ["anyOf counts its largest alternative", obj({ who: { anyOf: [str, obj({ first: str, last: str })] } }), 2],
    ["format, bounds, const, title and draft-07 $schema", {
      $schema: "http://json-schema.org/draft-07/schema#",
      title: "Event",
      ...obj({
        date: { type: "string", format: "date" },
        seats: { type: "integer", minimum: 0, maximum: 500 },
        kind: { type: "string", const: "concert" },
        open: { type: "object" },
      }, { additionalProperties: false }),
    }, 4],
    ["exactly 50 properties", obj(strings(50)), 50],
    ["exactly 200 nodes", obj({ ...Object.fromEntries([0, 1, 2, 3].map((i) => [`o${i}`, obj(strings(48))])), ...strings(3) }), 195],
  ];

  test.each(valid)("%s is accepted", async (_label, schema, fieldCount) => {
    const res = await (await newTenant()).api.post(PATH, { name: "Good", schema });
    expect(res.status).toBe(201);
    expect(res.body.field_count).toBe(fieldCount);
    expect(res.body.schema).toEqual(schema as Record<string, unknown>);
  });

  test("a schema of exactly 32768 bytes is accepted, one more byte is not", async () => {
    const { api } = await newTenant();
    const base = JSON.stringify(obj({ a: { type: "string", description: "" } })).length;
    const exact = obj({ a: { type: "string", description: "x".repeat(32_768 - base) } });
    expect(JSON.stringify(exact).length).toBe(32_768);
    expect((await api.post(PATH, { name: "Exact", schema: exact })).status).toBe(201);
    const over = obj({ a: { type: "string", description: "x".repeat(32_769 - base) } });
    const res = await api.post(PATH, { name: "Over", schema: over });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain("got 32769 bytes");
  });

  test("PUT applies the same rules", async () => {
    const { api } = await newTenant();
    const created = (await api.post(PATH, { name: "Kept", schema: INVOICE })).body;
    const res = await api.put(`${PATH}/${created.id}`, { name: "Kept", schema: obj({ a: { $ref: "#" } }) });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("CUSTOM_SCHEMA_INVALID_SCHEMA");
    expect((await api.get(`${PATH}/${created.id}`)).body).toEqual(created);
  });
});

describe("GET /custom-extraction-schemas", () => {
  test("newest first, summaries without schema and prompt_hint, with pagination", async () => {
    const { api } = await newTenant();
    for (const name of ["First", "Second", "Third"]) {
      expect((await api.post(PATH, { name, schema: INVOICE, prompt_hint: "hint" })).status).toBe(201);
    }
    const all = await api.get(PATH);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_count: 3, limit: 50, offset: 0, has_more: false });
    expect(all.body.items.map((s: { name: string }) => s.name)).toEqual(["Third", "Second", "First"]);
    for (const item of all.body.items) {
      expect(Object.keys(item).sort()).toEqual(["created_at", "created_by", "description", "field_count", "id", "name", "updated_at"]);
      expect(item.field_count).toBe(4);
    }

    const first = await api.get(`${PATH}?limit=2`);
    expect(first.body).toMatchObject({ total_count: 3, limit: 2, offset: 0, has_more: true });
    expect(first.body.items.map((s: { name: string }) => s.name)).toEqual(["Third", "Second"]);
    const second = await api.get(`${PATH}?limit=2&offset=2`);
    expect(second.body).toMatchObject({ total_count: 3, limit: 2, offset: 2, has_more: false });
    expect(second.body.items.map((s: { name: string }) => s.name)).toEqual(["First"]);
    expect((await api.get(`${PATH}?offset=10`)).body).toMatchObject({ items: [], total_count: 3, has_more: false });
    expect((await api.get(`${PATH}?limit=500`)).status).toBe(200);
  });

  test("limit outside 1-500 and bad offsets are 400 naming the parameter", async () => {
    const { api } = await newTenant();
    for (const [query, name] of [
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["limit=abc", "limit"],
      ["offset=-1", "offset"],
      ["offset=x", "offset"],
    ] as const) {
      const res = await api.get(`${PATH}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.detail, query).toContain(name);
    }
  });

  test("a listing shows only the caller's organization", async () => {
    const a = await newTenant();
    const b = await newTenant();
    await a.api.post(PATH, { name: "A-only", schema: INVOICE });
    await b.api.post(PATH, { name: "B-only", schema: INVOICE });
    const listed = (await a.api.get(PATH)).body;
    expect(listed.total_count).toBe(1);
    expect(listed.items.map((s: { name: string }) => s.name)).toEqual(["A-only"]);
  });
});

describe("GET /custom-extraction-schemas/{schema_id}", () => {
  test("404 CUSTOM_SCHEMA_NOT_FOUND for an unknown id and for another organization's schema", async () => {
    const owner = await newTenant();
    const other = await newTenant();
    const schema = (await owner.api.post(PATH, { name: "Private", schema: INVOICE })).body;
    for (const [label, api, id] of [
      ["unknown", owner.api, crypto.randomUUID()],
      ["other org", other.api, schema.id],
    ] as const) {
      const res = await api.get(`${PATH}/${id}`);
      expect(res.status, label).toBe(404);
      expect(res.body.code, label).toBe("CUSTOM_SCHEMA_NOT_FOUND");
    }
  });

  test("a malformed id is 400 naming schema_id", async () => {
    const res = await (await newTenant()).api.get(`${PATH}/not-a-uuid`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain("schema_id");
  });
});

describe("PUT /custom-extraction-schemas/{schema_id}", () => {
  test("a full replacement: description and prompt_hint left out are cleared, field_count recomputed", async () => {
    const { api } = await newTenant();
    const created = (await api.post(PATH, { name: "Old", description: "d", schema: INVOICE, prompt_hint: "h" })).body;
    await clockPassed(created.updated_at);
    const replacement = obj({ vendor: obj({ name: str, vat: str }) });
    const res = await api.put(`${PATH}/${created.id}`, { name: "New", schema: replacement });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: "New", description: null, prompt_hint: null, schema: replacement, field_count: 2 });
    expect(res.body.created_at).toBe(created.created_at);
    expect(res.body.created_by).toBe(created.created_by);
    expect(res.body.updated_at > created.updated_at).toBe(true);
    expect((await api.get(`${PATH}/${created.id}`)).body).toEqual(res.body);
  });

  test("null clears, and given values replace", async () => {
    const { api } = await newTenant();
    const created = (await api.post(PATH, { name: "S", description: "d", schema: INVOICE, prompt_hint: "h" })).body;
    const res = await api.put(`${PATH}/${created.id}`, { name: "S", description: null, prompt_hint: "new hint", schema: INVOICE });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ description: null, prompt_hint: "new hint" });
  });

  test("name and schema are required; field rules and codes as on create", async () => {
    const { api } = await newTenant();
    const created = (await api.post(PATH, { name: "S", schema: INVOICE })).body;
    expect((await api.put(`${PATH}/${created.id}`, { schema: INVOICE })).status).toBe(400);
    expect((await api.put(`${PATH}/${created.id}`, { name: "S" })).status).toBe(400);
    const blank = await api.put(`${PATH}/${created.id}`, { name: " ", schema: INVOICE });
    expect(blank.body.code).toBe("CUSTOM_SCHEMA_INVALID_NAME");
    const long = await api.put(`${PATH}/${created.id}`, { name: "S", schema: INVOICE, prompt_hint: "p".repeat(2001) });
    expect(long.body.code).toBe("CUSTOM_SCHEMA_INVALID_PROMPT_HINT");
    expect((await api.get(`${PATH}/${created.id}`)).body).toEqual(created);
  });

  test("renaming to another schema's name (any case) is CUSTOM_SCHEMA_NAME_EXISTS; re-casing its own name is fine", async () => {
    const { api } = await newTenant();
    await api.post(PATH, { name: "Taken", schema: INVOICE });
    const mine = (await api.post(PATH, { name: "Mine", schema: INVOICE })).body;
    const clash = await api.put(`${PATH}/${mine.id}`, { name: "TAKEN", schema: INVOICE });
    expect(clash.status).toBe(400);
    expect(clash.body.code).toBe("CUSTOM_SCHEMA_NAME_EXISTS");
    const recased = await api.put(`${PATH}/${mine.id}`, { name: "MINE", schema: INVOICE });
    expect(recased.status).toBe(200);
    expect(recased.body.name).toBe("MINE");
  });

  test("404 for an unknown id or another organization's schema, which stays unchanged", async () => {
    const owner = await newTenant();
    const schema = (await owner.api.post(PATH, { name: "P", schema: INVOICE })).body;
    const missing = await owner.api.put(`${PATH}/${crypto.randomUUID()}`, { name: "X", schema: INVOICE });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("CUSTOM_SCHEMA_NOT_FOUND");
    const foreign = await (await newTenant()).api.put(`${PATH}/${schema.id}`, { name: "Hijacked", schema: INVOICE });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("CUSTOM_SCHEMA_NOT_FOUND");
    expect((await owner.api.get(`${PATH}/${schema.id}`)).body.name).toBe("P");
  });
});

describe("DELETE /custom-extraction-schemas/{schema_id}", () => {
  test("200 {message}, then the schema is gone and its name is free again", async () => {
    const { api } = await newTenant();
    const schema = (await api.post(PATH, { name: "Temp", schema: INVOICE })).body;
    const res = await api.delete(`${PATH}/${schema.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["message"]);
    expect(res.body.message).toContain("Temp");
    expect((await api.get(`${PATH}/${schema.id}`)).status).toBe(404);
    const again = await api.delete(`${PATH}/${schema.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("CUSTOM_SCHEMA_NOT_FOUND");
    expect((await api.post(PATH, { name: "temp", schema: INVOICE })).status).toBe(201);
  });

  test("another organization cannot delete it", async () => {
    const owner = await newTenant();
    const schema = (await owner.api.post(PATH, { name: "Mine", schema: INVOICE })).body;
    const res = await (await newTenant()).api.delete(`${PATH}/${schema.id}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("CUSTOM_SCHEMA_NOT_FOUND");
    expect((await owner.api.get(`${PATH}/${schema.id}`)).status).toBe(200);
  });
});

describe("authentication and permissions", () => {
  test("VIEW reads, EDIT creates and replaces, DELETE deletes; each missing one is 403", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM", permissions: ["view", "edit", "delete"] });
    const schema = (await tenant.api.post(PATH, { name: "Guarded", schema: INVOICE })).body;
    const viewOnly = await tenant.keyWith(["view"]);
    const viewEdit = await tenant.keyWith(["view", "edit"]);
    const editOnly = await tenant.keyWith(["edit"]);
    const deleteOnly = await tenant.keyWith(["delete"]);

    expect((await viewOnly.get(PATH)).status).toBe(200);
    const read = await viewOnly.get(`${PATH}/${schema.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(schema);
    for (const [label, res] of [
      ["view cannot create", await viewOnly.post(PATH, { name: "X", schema: INVOICE })],
      ["view cannot replace", await viewOnly.put(`${PATH}/${schema.id}`, { name: "X", schema: INVOICE })],
      ["view cannot delete", await viewOnly.delete(`${PATH}/${schema.id}`)],
      ["view+edit cannot delete", await viewEdit.delete(`${PATH}/${schema.id}`)],
      ["edit cannot list", await editOnly.get(PATH)],
      ["edit cannot read", await editOnly.get(`${PATH}/${schema.id}`)],
      ["delete cannot create", await deleteOnly.post(PATH, { name: "X", schema: INVOICE })],
    ] as const) {
      expect(res.status, label).toBe(403);
      expect(res.body.code, label).toBe("PERMISSION_DENIED");
    }
    // Permission is checked before the body: an invalid body from a view-only key is still 403.
    expect((await viewOnly.post(PATH, { name: "", schema: "nope" })).status).toBe(403);

    const edited = await editOnly.put(`${PATH}/${schema.id}`, { name: "Guarded", schema: INVOICE, description: "edited" });
    expect(edited.status).toBe(200);
    expect((await deleteOnly.delete(`${PATH}/${schema.id}`)).status).toBe(200);
  });

  test("401 UNAUTHENTICATED without a key on every route", async () => {
    const id = crypto.randomUUID();
    for (const [label, call] of [
      ["create", (c: ApiClient) => c.post(PATH, { name: "X", schema: INVOICE })],
      ["list", (c: ApiClient) => c.get(PATH)],
      ["get", (c: ApiClient) => c.get(`${PATH}/${id}`)],
      ["replace", (c: ApiClient) => c.put(`${PATH}/${id}`, { name: "X", schema: INVOICE })],
      ["delete", (c: ApiClient) => c.delete(`${PATH}/${id}`)],
    ] as const) {
      const res = await call(server.anonymous());
      expect(res.status, label).toBe(401);
      expect(res.body.code, label).toBe("UNAUTHENTICATED");
    }
  });
});
