/**
 * Rules through real HTTP: the rule shape as written, a rule that tags and moves a
 * matching document once its analysis ends and leaves another alone, the record on the file, a
 * rule whose action fails rolled back alone,
 * dry runs, apply-to-library as a job with progress, validation, roles and tenant isolation.
 * The condition vocabulary is also checked directly on facts (conditions.ts is pure).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { compileConditions, conditionsHold, parseConditions, type FileFacts } from "../src/rules/conditions.ts";
import { jobDone, pollApi, processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const uploadText = (tenant: Tenant, text: string, filename: string) => uploadFile(tenant.api, text, filename, {}, { type: "text/plain" });

const FINANCE = { name: "finance", conditions: [{ field: "text", op: "contains", value: "invoice" }], actions: [{ type: "add_tags", tags: ["finance"] }] };

describe("rules run when a file's analysis ends", () => {
  test("the issue's rule shape works as written; a tag-and-move rule changes the matching document only, and the file records it", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const created = await tenant.api.post("/rules", FINANCE);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ name: "finance", enabled: true, match: "all", conditions: FINANCE.conditions, actions: FINANCE.actions, applied_files: 0 });
    const folder = (await tenant.api.post("/folders", { name: "Invoices" })).body;
    const mover = await tenant.api.post("/rules", {
      name: "file invoices",
      position: 1,
      conditions: [{ field: "tags", op: "contains", value: "Finance" }, { field: "media_type", op: "equals", value: "document" }],
      actions: [{ type: "move", folder_id: folder.id }, { type: "add_tags", tags: ["filed"] }],
    });
    expect(mover.status, JSON.stringify(mover.body)).toBe(201);

    const invoice = await uploadText(tenant, "INVOICE 2024-117\nAmount due: 1,200 EUR\nPay within 30 days.", "march.txt");
    const letter = await uploadText(tenant, "Dear team,\nthe picnic is on Friday.", "picnic.txt");
    await processed(tenant, invoice);
    await processed(tenant, letter);
    const tagged = await pollApi(tenant, `/files/${invoice}`, (r) => r.body.tags?.includes("filed"), { what: "the rules to tag and move the invoice" });
    expect(tagged.body.tags).toEqual(expect.arrayContaining(["finance", "filed"]));
    expect(tagged.body.folder_id).toBe(folder.id);

    const history = (await tenant.api.get(`/files/${invoice}/rule-applications`)).body;
    expect(history.items.map((a: any) => [a.rule_name, a.trigger, a.status])).toEqual([
      ["file invoices", "analysis", "applied"],
      ["finance", "analysis", "applied"],
    ]);
    expect(history.items[0].outcomes).toEqual([
      { type: "move", outcome: `moved into folder ${folder.id}` },
      { type: "add_tags", outcome: "added filed" },
    ]);
    expect(Date.parse(history.items[0].applied_at)).toBeGreaterThan(0);

    // The letter's automation job ran too (the organization has rules) and changed nothing.
    await pollApi(tenant, `/jobs?queue=file.automate&status=completed`, (r) => r.body.items.some((j: any) => j.file_id === letter), { what: "the letter's automation job" });
    const untouched = (await tenant.api.get(`/files/${letter}`)).body;
    expect(untouched.tags).not.toContain("finance");
    expect(untouched.folder_id).toBeNull();
    expect((await tenant.api.get(`/files/${letter}/rule-applications`)).body.total_count).toBe(0);
    expect((await tenant.api.get(`/rules/${created.body.id}`)).body).toMatchObject({ applied_files: 1 });
    expect((await tenant.api.get(`/rules/${created.body.id}/applications`)).body.items.map((a: any) => a.file_id)).toEqual([invoice]);
  });

  test("a rule whose action fails changes nothing and is recorded failed; the rules after it still apply", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const folder = (await tenant.api.post("/folders", { name: "Receipts" })).body;
    const breaks = await tenant.api.post("/rules", {
      name: "tag then file receipts",
      conditions: [{ field: "text", op: "contains", value: "receipt" }],
      actions: [{ type: "add_tags", tags: ["half-done"] }, { type: "move", folder_id: folder.id }],
    });
    expect(breaks.status, JSON.stringify(breaks.body)).toBe(201);
    expect((await tenant.api.post("/rules", { name: "mark seen", position: 1, conditions: [{ field: "text", op: "contains", value: "receipt" }], actions: [{ type: "add_tags", tags: ["seen"] }] })).status).toBe(201);
    // The folder goes after the rule named it: its move can no longer be made.
    expect((await tenant.api.delete(`/folders/${folder.id}`)).status).toBe(204);

    const receipt = await uploadText(tenant, "RECEIPT 4471\nCoffee beans, 2 kg.", "receipt.txt");
    await processed(tenant, receipt);
    const history = await pollApi(tenant, `/files/${receipt}/rule-applications`, (r) => r.body.total_count === 2, { what: "both rules' applications" });
    expect(history.body.items.map((a: any) => [a.rule_name, a.status])).toEqual([
      ["mark seen", "applied"],
      ["tag then file receipts", "failed"],
    ]);
    expect(history.body.items[1]).toMatchObject({ outcomes: [], error: expect.stringContaining(folder.id) });
    // The failed rule's first action was rolled back with it; the next rule's change stayed.
    const file = (await tenant.api.get(`/files/${receipt}`)).body;
    expect(file.tags).toContain("seen");
    expect(file.tags).not.toContain("half-done");
    expect(file.folder_id).toBeNull();
  });

  test("a disabled rule does not run; apply-to-library is a job with progress that applies it to existing files once", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const rule = (await tenant.api.post("/rules", { ...FINANCE, enabled: false })).body;
    const a = await uploadText(tenant, "invoice number 7", "a.txt");
    const b = await uploadText(tenant, "nothing to see", "b.txt");
    await processed(tenant, a);
    await processed(tenant, b);
    expect((await tenant.api.get(`/files/${a}`)).body.tags).not.toContain("finance");

    const dry = await tenant.api.post(`/rules/${rule.id}/dry-run`, {});
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ matched_count: 1, scanned_count: 2, has_more: false });
    expect(dry.body.files.map((f: any) => f.id)).toEqual([a]);
    expect((await tenant.api.get(`/files/${a}`)).body.tags).not.toContain("finance");

    const started = await tenant.api.post(`/rules/${rule.id}/apply`);
    expect(started.status).toBe(202);
    const job = await jobDone(tenant, started.body.job_id);
    expect(job).toMatchObject({ type: "rules.apply", status: "completed", progress: 100 });
    expect(job.results).toEqual([{ rule_id: rule.id, scanned_files: 2, applied_files: 1, failed_files: 0 }]);
    expect((await tenant.api.get(`/files/${a}`)).body.tags).toContain("finance");
    expect((await tenant.api.get(`/files/${b}`)).body.tags).not.toContain("finance");
    const history = (await tenant.api.get(`/files/${a}/rule-applications`)).body.items;
    expect(history).toMatchObject([{ rule_id: rule.id, trigger: "library", job_id: started.body.job_id, status: "applied" }]);
  });

  test("unsaved conditions can be tried with a dry run", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const id = await uploadText(tenant, "Receipt for order 55", "receipt.txt");
    await processed(tenant, id);
    const hit = await tenant.api.post("/rules/dry-run", { conditions: [{ field: "text", op: "regex", value: "order\\s+\\d+" }, { field: "filename", op: "ends_with", value: ".TXT" }] });
    expect(hit.body).toMatchObject({ matched_count: 1, files: [{ id, filename: "receipt.txt", media_type: "document" }] });
    const miss = await tenant.api.post("/rules/dry-run", { match: "all", conditions: [{ field: "text", op: "contains", value: "order", case_sensitive: true }, { field: "source", op: "equals", value: "upload" }] });
    expect(miss.body.matched_count).toBe(1);
    const none = await tenant.api.post("/rules/dry-run", { conditions: [{ field: "source", op: "in", value: ["mail", "watch"] }] });
    expect(none.body.matched_count).toBe(0);
    // A document's kind gives its page count (MediaKind.conditionFacts); other kinds' fields are null for it.
    const pages = await tenant.api.post("/rules/dry-run", { conditions: [{ field: "page_count", op: "equals", value: 1 }, { field: "duration_seconds", op: "not_exists" }, { field: "domain", op: "not_exists" }] });
    expect(pages.body).toMatchObject({ matched_count: 1, files: [{ id }] });
    expect((await tenant.api.post("/rules/dry-run", { conditions: [{ field: "page_count", op: "gt", value: 1 }] })).body.matched_count).toBe(0);
  });
});

test("conditions on the camera and the place its GPS names", async () => {
  const tenant = await server.tenant({ tier: "CUSTOM" });
  const rule = await tenant.api.post("/rules", {
    name: "paris trip",
    conditions: [{ field: "camera", op: "contains", value: "pixel 7" }, { field: "place", op: "contains", value: "paris" }, { field: "country_code", op: "equals", value: "FR" }],
    actions: [{ type: "add_tags", tags: ["paris-trip"] }],
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  const photo = async (gps: boolean) =>
    sharp({ create: { width: 160, height: 120, channels: 3, background: gps ? "#3366aa" : "#aa6633" } })
      .jpeg()
      .withExif({
        IFD0: { Make: "Google", Model: "Pixel 7" },
        ...(gps ? { IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 24/1", GPSLongitudeRef: "E", GPSLongitude: "2/1 21/1 8/1" } } : {}),
      } as never)
      .toBuffer();
  const upload = async (bytes: Buffer, name: string) => {
    const form = new FormData();
    form.append("file", new File([new Uint8Array(bytes)], name, { type: "image/jpeg" }));
    return (await tenant.api.form("/files/upload", form)).body.image_id as string;
  };
  const inParis = await upload(await photo(true), "eiffel.jpg");
  const nowhere = await upload(await photo(false), "desk.jpg");
  await processed(tenant, inParis, 120_000);
  await processed(tenant, nowhere, 120_000);
  await pollApi(tenant, `/files/${inParis}`, (r) => r.body.tags?.includes("paris-trip"), { what: "the Paris photo to be tagged" });
  await pollApi(tenant, `/jobs?queue=file.automate&status=completed`, (r) => r.body.items.some((j: any) => j.file_id === nowhere), { what: "the other photo's automation job" });
  expect((await tenant.api.get(`/files/${nowhere}`)).body.tags).not.toContain("paris-trip");
});

describe("rules API", () => {
  test("list, patch, delete; names are unique case-insensitively", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const first = (await tenant.api.post("/rules", FINANCE)).body;
    expect((await tenant.api.post("/rules", { ...FINANCE, name: "FINANCE" })).status).toBe(409);
    const second = (await tenant.api.post("/rules", { ...FINANCE, name: "early", position: -5 })).body;
    expect((await tenant.api.get("/rules")).body.items.map((r: any) => r.name)).toEqual(["early", "finance"]);
    const patched = await tenant.api.patch(`/rules/${first.id}`, { enabled: false, match: "any", conditions: [] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, match: "any", conditions: [], actions: FINANCE.actions });
    expect((await tenant.api.patch(`/rules/${second.id}`, { name: "Finance" })).status).toBe(409);
    expect((await tenant.api.delete(`/rules/${first.id}`)).status).toBe(204);
    expect((await tenant.api.get(`/rules/${first.id}`)).status).toBe(404);
  });

  test("bad conditions and actions are 400 naming what is wrong", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const cases: [unknown, string][] = [
      [{ ...FINANCE, name: " " }, "name"],
      [{ ...FINANCE, conditions: [{ field: "colour", op: "equals", value: "red" }] }, "conditions.0.field"],
      [{ ...FINANCE, conditions: [{ field: "text", op: "gt", value: 3 }] }, "conditions.0.op"],
      [{ ...FINANCE, conditions: [{ field: "text", op: "regex", value: "(?<=a)b" }] }, "RE2"],
      [{ ...FINANCE, conditions: [{ field: "size_bytes", op: "gt", value: "big" }] }, "number"],
      [{ ...FINANCE, conditions: [{ field: "tags", op: "in", value: [] }] }, "conditions.0.value"],
      [{ ...FINANCE, conditions: [{ field: "text", op: "contains", value: "x", colour: 1 }] }, "colour"],
      [{ ...FINANCE, actions: [] }, "actions"],
      [{ ...FINANCE, actions: [{ type: "explode" }] }, "actions.0.type"],
      [{ ...FINANCE, actions: [{ type: "add_tags", tags: ["x".repeat(51)] }] }, "actions.0.tags"],
      [{ ...FINANCE, actions: [{ type: "move" }] }, "folder_id or project_id"],
      [{ ...FINANCE, actions: [{ type: "call_webhook", webhook_id: crypto.randomUUID() }] }, "webhook"],
      [{ name: "x", conditions: "text", actions: FINANCE.actions }, "conditions"],
    ];
    for (const [body, mention] of cases) {
      const res = await tenant.api.post("/rules", body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toContain(mention);
    }
    const missingFolder = await tenant.api.post("/rules", { ...FINANCE, actions: [{ type: "move", folder_id: crypto.randomUUID() }] });
    expect([missingFolder.status, missingFolder.body.code]).toEqual([404, "FOLDER_NOT_FOUND"]);
  });

  test("roles are checked before the body, and another organization's rules are 404", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const viewer = await tenant.keyWith(["view"]);
    expect((await viewer.post("/rules", { nonsense: true })).status).toBe(403);
    const rule = (await tenant.api.post("/rules", FINANCE)).body;
    expect((await viewer.get(`/rules/${rule.id}`)).status).toBe(200);
    expect((await viewer.post(`/rules/${rule.id}/apply`)).status).toBe(403);
    expect((await viewer.delete(`/rules/${rule.id}`)).status).toBe(403);
    const stranger = await server.tenant({ tier: "CUSTOM" });
    for (const res of [
      await stranger.api.get(`/rules/${rule.id}`),
      await stranger.api.patch(`/rules/${rule.id}`, { enabled: false }),
      await stranger.api.delete(`/rules/${rule.id}`),
      await stranger.api.post(`/rules/${rule.id}/apply`),
      await stranger.api.post(`/rules/${rule.id}/dry-run`, {}),
      await stranger.api.get(`/rules/${rule.id}/applications`),
    ]) {
      expect([res.status, res.body.code]).toEqual([404, "RULE_NOT_FOUND"]);
    }
    expect((await stranger.api.get("/rules")).body.total_count).toBe(0);
  });
});

describe("conditions", () => {
  const facts: FileFacts = {
    media_type: "image", document_type: null, content_type: "image/jpeg", filename: "IMG_1.JPG", title: null, text: "STOP sign", description: "a red sign",
    tags: ["Street", "sign"], category: "general", source: "watch", size_bytes: 2048, page_count: null, duration_seconds: null, domain: null,
    project_id: "p", folder_id: null, camera: "Canon EOS R6", lens: null, place: "Lyon, Auvergne-Rhône-Alpes, France", country_code: "FR",
    people_count: 3, people: ["Ada", "Grace"],
    predicted_tags: new Map([["finance", 0.8], ["travel", 0.2]]), predicted_folder_id: new Map([["f-invoices", 0.6], ["f-letters", 0.4]]),
  };
  const check = (conditions: unknown[], match: "all" | "any" = "all") => conditionsHold(compileConditions(parseConditions(conditions)), match, facts);

  test("each kind of field with its operators", () => {
    expect(check([{ field: "text", op: "contains", value: "stop" }])).toBe(true);
    expect(check([{ field: "text", op: "contains", value: "stop", case_sensitive: true }])).toBe(false);
    expect(check([{ field: "title", op: "not_exists" }, { field: "description", op: "exists" }])).toBe(true);
    expect(check([{ field: "tags", op: "contains", value: "street" }, { field: "tags", op: "not_contains", value: "car" }])).toBe(true);
    expect(check([{ field: "tags", op: "in", value: ["car", "SIGN"] }])).toBe(true);
    expect(check([{ field: "size_bytes", op: "gte", value: 2048 }, { field: "size_bytes", op: "lt", value: 4096 }])).toBe(true);
    expect(check([{ field: "page_count", op: "gt", value: 1 }])).toBe(false);
    expect(check([{ field: "source", op: "not_in", value: ["mail", "cloud"] }, { field: "media_type", op: "equals", value: "IMAGE" }])).toBe(true);
    expect(check([{ field: "filename", op: "regex", value: "^img_\\d+\\.jpe?g$" }])).toBe(true);
    expect(check([{ field: "media_type", op: "equals", value: "video" }, { field: "text", op: "contains", value: "sign" }], "any")).toBe(true);
    expect(check([{ field: "media_type", op: "equals", value: "video" }, { field: "text", op: "contains", value: "sign" }], "all")).toBe(false);
    expect(check([{ field: "camera", op: "contains", value: "canon" }, { field: "lens", op: "not_exists" }])).toBe(true);
    expect(check([{ field: "place", op: "contains", value: "lyon" }, { field: "country_code", op: "in", value: ["fr", "be"] }])).toBe(true);
    expect(check([{ field: "place", op: "not_exists" }])).toBe(false);
    expect(check([])).toBe(true);
  });

  test("people: how many were seen and who was recognised", () => {
    expect(check([{ field: "people_count", op: "gte", value: 3 }])).toBe(true);
    expect(check([{ field: "people_count", op: "lt", value: 3 }])).toBe(false);
    expect(check([{ field: "people", op: "contains", value: "ada" }])).toBe(true);
    expect(check([{ field: "people", op: "in", value: ["Linus", "Grace"] }])).toBe(true);
    const nobodyLooked: FileFacts = { ...facts, people_count: null, people: [] };
    expect(conditionsHold(compileConditions(parseConditions([{ field: "people_count", op: "exists" }])), "all", nobodyLooked)).toBe(false);
    expect(conditionsHold(compileConditions(parseConditions([{ field: "people", op: "not_exists" }])), "all", nobodyLooked)).toBe(true);
  });

  test("predicted tags count from their score; a predicted folder is the best-scored one", () => {
    expect(check([{ field: "predicted_tags", op: "contains", value: "Finance" }])).toBe(true);
    expect(check([{ field: "predicted_tags", op: "contains", value: "travel" }])).toBe(false);
    expect(check([{ field: "predicted_tags", op: "contains", value: "travel", min_score: 0.2 }])).toBe(true);
    expect(check([{ field: "predicted_tags", op: "contains", value: "finance", min_score: 0.9 }])).toBe(false);
    expect(check([{ field: "predicted_tags", op: "not_contains", value: "travel" }])).toBe(true);
    expect(check([{ field: "predicted_tags", op: "in", value: ["travel", "finance"] }])).toBe(true);
    expect(check([{ field: "predicted_folder_id", op: "equals", value: "f-invoices" }])).toBe(true);
    // Both folders pass a low bar: the file still goes to one, the better scored.
    expect(check([{ field: "predicted_folder_id", op: "equals", value: "f-letters", min_score: 0.1 }])).toBe(false);
    expect(check([{ field: "predicted_folder_id", op: "equals", value: "f-invoices", min_score: 0.7 }])).toBe(false);
    expect(check([{ field: "predicted_folder_id", op: "not_in", value: ["f-letters"] }])).toBe(true);
    const none: FileFacts = { ...facts, predicted_tags: null, predicted_folder_id: null };
    expect(conditionsHold(compileConditions(parseConditions([{ field: "predicted_tags", op: "contains", value: "finance" }])), "all", none)).toBe(false);
    expect(conditionsHold(compileConditions(parseConditions([{ field: "predicted_folder_id", op: "not_equals", value: "f-invoices" }])), "all", none)).toBe(true);
    expect(() => parseConditions([{ field: "text", op: "contains", value: "x", min_score: 0.5 }])).toThrow(/only predicted_tags and predicted_folder_id take a min_score/);
    expect(() => parseConditions([{ field: "predicted_tags", op: "contains", value: "x", min_score: 1.5 }])).toThrow(/min_score: must be a number above 0 and at most 1/);
    expect(() => parseConditions([{ field: "predicted_folder_id", op: "contains", value: "x" }])).toThrow(/for predicted_folder_id must be one of equals, not_equals, in, not_in/);
  });

  test("a catastrophic pattern for backtracking engines runs in linear time on RE2", () => {
    const long = { ...facts, text: `${"a".repeat(50_000)}b` };
    const started = performance.now();
    expect(conditionsHold(compileConditions(parseConditions([{ field: "text", op: "regex", value: "(a+)+$" }])), "all", long)).toBe(false);
    // A backtracking engine takes longer than the age of the universe here; RE2 a few ms (bounded generously for a busy machine).
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
