/**
 * Two rule features through real HTTP: the run_schema action (a custom extraction schema filled
 * for a file long after its analysis, stored where the pipeline stores its own: the
 * `custom_schema` extraction) on a document and on an image analysed without the detectors'
 * findings (they are obtained then, from the stored variant); and the people_count condition on
 * real detectors (bundled with @vladmandic/human: no fetched model).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { crowdComposite, portrait } from "./support/crowd-fixtures.ts";
import { photo } from "./support/images.ts";
import { jobDone, pollApi, processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function upload(tenant: Tenant, bytes: Uint8Array | string, filename: string, fields: Record<string, string> = {}): Promise<string> {
  const id = await uploadFile(tenant.api, bytes, filename, fields);
  await processed(tenant, id, 240_000);
  return id;
}

const schemaOf = (extractions: any[]) => extractions.find((e) => e.domain === "custom_schema");

describe("run_schema", () => {
  test("a rule fills a custom schema from a document's text when its analysis ends; bad references are refused", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const created = await tenant.api.post("/custom-extraction-schemas", {
      name: "invoice",
      schema: { type: "object", properties: { invoice_number: { type: "string" }, total: { type: "number" }, iban: { type: "string" } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const schema = created.body;
    const missing = await tenant.api.post("/rules", { name: "x", actions: [{ type: "run_schema", schema_id: crypto.randomUUID() }] });
    expect([missing.status, missing.body.code]).toEqual([404, "CUSTOM_SCHEMA_NOT_FOUND"]);
    const noId = await tenant.api.post("/rules", { name: "x", actions: [{ type: "run_schema" }] });
    expect([noId.status, noId.body.detail]).toEqual([400, "actions.0.schema_id: required"]);
    const stranger = await server.tenant({ tier: "CUSTOM" });
    const theirs = await stranger.api.post("/rules", { name: "x", actions: [{ type: "run_schema", schema_id: schema.id }] });
    expect([theirs.status, theirs.body.code], JSON.stringify(theirs.body)).toEqual([404, "CUSTOM_SCHEMA_NOT_FOUND"]);

    const rule = await tenant.api.post("/rules", {
      name: "read invoices",
      conditions: [{ field: "text", op: "contains", value: "invoice" }],
      actions: [{ type: "run_schema", schema_id: schema.id }],
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const invoice = await upload(tenant, "ACME Tools\n\nInvoice number: INV-7781\nDate: 2025-03-02\nTotal: 1,250.00 EUR\n", "invoice.txt");
    const letter = await upload(tenant, "Dear Anna, see you at the picnic.", "letter.txt");

    const filled = await pollApi(tenant, `/files/${invoice}`, (r) => schemaOf(r.body.extractions ?? []) !== undefined, { what: "the schema's extraction on the invoice" });
    const extraction = schemaOf(filled.body.extractions);
    expect(extraction.source).toBe("mediabox schema-fill (local evidence)");
    expect(extraction.data).toMatchObject({ schema_id: schema.id, schema_name: "invoice", value: { invoice_number: "INV-7781", total: 1250 }, unfilled: ["iban"] });
    const history = (await tenant.api.get(`/files/${invoice}/rule-applications`)).body.items;
    expect(history[0].outcomes).toEqual([{ type: "run_schema", outcome: `extraction with schema ${schema.id} queued` }]);

    await pollApi(tenant, "/jobs?queue=file.automate&status=completed", (r) => r.body.items.some((j: any) => j.file_id === letter), { what: "the letter's automation job" });
    expect((await tenant.api.get(`/files/${letter}`)).body.extractions).toEqual([]);
  });
});

describe("images", () => {
  test("people_count counts what the detectors saw; a schema run on an image analysed without findings looks at its stored variant", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const crowd = await upload(tenant, (await crowdComposite(3, "plain", 7, 1200, 900)).image, "crowd.jpg");
    const landscape = await upload(tenant, await photo(3, 900, 700), "landscape.jpg");
    // auto_describe=false: the detectors do not run in the pipeline, only face recognition does.
    const face = await upload(tenant, await portrait(), "portrait.jpg", { auto_describe: "false" });

    const groups = (await tenant.api.post("/rules/dry-run", { conditions: [{ field: "people_count", op: "gte", value: 2 }] })).body;
    expect(groups.files.map((f: any) => f.id)).toEqual([crowd]);
    const nobody = (await tenant.api.post("/rules/dry-run", { conditions: [{ field: "people_count", op: "equals", value: 0 }] })).body;
    expect(nobody.files.map((f: any) => f.id)).toEqual([landscape]);

    const schema = (
      await tenant.api.post("/custom-extraction-schemas", {
        name: "photo facts",
        schema: { type: "object", properties: { face_count: { type: "integer" }, width: { type: "integer" }, has_person: { type: "boolean" } } },
      })
    ).body;
    const rule = (
      await tenant.api.post("/rules", { name: "portraits", conditions: [{ field: "filename", op: "starts_with", value: "portrait" }], actions: [{ type: "run_schema", schema_id: schema.id }] })
    ).body;
    const apply = await tenant.api.post(`/rules/${rule.id}/apply`);
    expect(apply.status, JSON.stringify(apply.body)).toBe(202);
    await jobDone(tenant, apply.body.job_id);
    const filled = await pollApi(tenant, `/files/${face}`, (r) => schemaOf(r.body.extractions ?? []) !== undefined, { what: "the schema's extraction on the portrait", timeoutMs: 120_000 });
    const detail = filled.body;
    expect(schemaOf(detail.extractions).data.value).toEqual({ face_count: 1, width: detail.dimensions.width, has_person: true });
    // Its findings are kept now: the portrait counts one person.
    const one = (await tenant.api.post("/rules/dry-run", { conditions: [{ field: "people_count", op: "equals", value: 1 }] })).body;
    expect(one.files.map((f: any) => f.id)).toEqual([face]);
  });
});
