/**
 * Auto matching through real HTTP: a rule naming predicted_tags trains the organization's model
 * on the files already tagged; a new file like them is tagged and moved when its analysis ends,
 * another is left alone; predicted folders learn from where files are; the model's status,
 * training on demand, roles and tenant isolation. Text documents only, so no model files.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jobDone, pollApi, processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

let server: TestServer;
beforeAll(async () => {
  // Learn again as soon as a file changes the library (the default waits five minutes).
  server = await startTestServer({ env: { MEDIABOX_AUTO_MATCH_RETRAIN_SECONDS: "0" } });
});
afterAll(() => server.close());

async function upload(tenant: Tenant, text: string, filename: string, fields: Record<string, string> = {}): Promise<string> {
  const id = await uploadFile(tenant.api, text, filename, fields, { type: "text/plain" });
  await processed(tenant, id);
  return id;
}

const INVOICES = [
  "Invoice 1042. Amount due 1,200 EUR for consulting services. Payment within 30 days to our bank account.",
  "INVOICE no. 77: office chairs, 4 units, total amount due 560 USD, VAT included. Please pay by bank transfer.",
  "Billing statement: invoice for March hosting, amount due 89.90, payment terms net 15 days.",
  "Final invoice for the kitchen renovation. Total due 8,400. Bank transfer, reference INV-2024-18.",
  "Invoice 553 for annual software licences; amount due on receipt; late payment fees apply after 30 days.",
  "Tax invoice: catering for the spring event, amount due 1,150, VAT 20%, payment by bank transfer.",
];
const OTHERS = [
  "Minutes of the team meeting: the picnic moves to Friday, Anna brings the salad and Tom the music.",
  "Recipe: slice the onions, brown them in butter, add the tomatoes and simmer for twenty minutes.",
  "Holiday notes: we walked along the beach, swam in the bay and watched the sunset from the hill.",
  "Dear neighbours, the garden party starts at four; children are welcome and there will be games.",
  "Training plan: run five kilometres on Monday, swim on Wednesday and cycle on Saturday morning.",
  "Book club: this month we read a novel about a lighthouse keeper and his daughter on a stormy island.",
];

describe("auto matching", () => {
  test("a rule on predicted_tags learns from the tagged files; a new invoice is tagged and moved, a new letter is left alone", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    for (const [i, text] of INVOICES.entries()) await upload(tenant, text, `invoice-${i}.txt`, { tags: "finance" });
    for (const [i, text] of OTHERS.entries()) await upload(tenant, text, `note-${i}.txt`);
    expect((await tenant.api.get("/rules/auto-matching")).body).toMatchObject({ trained_at: null, example_files: 0, stale: true, labels: [] });

    const folder = (await tenant.api.post("/folders", { name: "Invoices" })).body;
    const rule = await tenant.api.post("/rules", {
      name: "auto finance",
      conditions: [{ field: "predicted_tags", op: "contains", value: "Finance" }],
      actions: [{ type: "add_tags", tags: ["finance"] }, { type: "move", folder_id: folder.id }],
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    // Saving the rule trained the model on the library.
    const status = await pollApi(tenant, "/rules/auto-matching", (r) => r.body.trained_at !== null, { what: "the model to be trained after the rule was saved" });
    expect(status.body.example_files).toBe(12);
    expect(status.body.labels).toEqual([{ kind: "tag", label: "finance", examples: 6 }]);

    const invoice = await upload(tenant, "Invoice 2025-3 for translation work: amount due 640 EUR, payment by bank transfer within 30 days.", "new-invoice.txt");
    const letter = await upload(tenant, "Hello all, the summer picnic by the lake is on Sunday; bring games and something to share.", "new-letter.txt");
    const tagged = await pollApi(tenant, `/files/${invoice}`, (r) => r.body.folder_id === folder.id, { what: "the rule to tag and move the new invoice" });
    expect(tagged.body.tags).toContain("finance");
    await pollApi(tenant, "/jobs?queue=file.automate&status=completed", (r) => r.body.items.some((j: any) => j.file_id === letter), { what: "the letter's automation job" });
    const untouched = (await tenant.api.get(`/files/${letter}`)).body;
    expect(untouched.tags).not.toContain("finance");
    expect(untouched.folder_id).toBeNull();

    // The new files changed the library: it is learned again (no wait configured here), now with the new invoice and the folder.
    const again = await pollApi(tenant, "/rules/auto-matching", (r) => r.body.example_files === 14 && !r.body.stale, { what: "the model to learn the changed library" });
    expect(again.body.labels).toContainEqual({ kind: "tag", label: "finance", examples: 7 });

    // The dry run of the same condition lists the invoices and none of the notes.
    const dry = (await tenant.api.post("/rules/dry-run", { conditions: [{ field: "predicted_tags", op: "contains", value: "finance" }], limit: 500 })).body;
    const names = dry.files.map((f: any) => f.filename);
    expect(names).toContain("new-invoice.txt");
    expect(names.filter((n: string) => n.startsWith("note-") || n === "new-letter.txt")).toEqual([]);
  });

  test("predicted folders learn from where files are; training on demand is a job; roles and other organizations", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const recipes = (await tenant.api.post("/folders", { name: "Recipes" })).body;
    const recipeTexts = [
      "Pancakes: whisk flour, eggs and milk, rest the batter, fry in butter and serve with syrup.",
      "Tomato soup: roast tomatoes and garlic, blend with stock, season with salt, pepper and basil.",
      "Risotto: toast the rice in butter, add wine, then stock ladle by ladle, finish with parmesan.",
      "Bread: knead flour, water, yeast and salt, let the dough rise twice, bake forty minutes.",
      "Curry: fry onions, garlic and ginger, add spices, simmer the chickpeas in coconut milk.",
    ];
    for (const [i, text] of recipeTexts.entries()) await upload(tenant, text, `recipe-${i}.txt`, { folder_id: recipes.id });
    for (const [i, text] of OTHERS.slice(0, 5).entries()) await upload(tenant, text, `note-${i}.txt`);
    const cake = await upload(tenant, "Lemon cake: beat butter and sugar, add eggs, flour and lemon zest, bake in a slow oven.", "cake.txt");

    const viewer = await tenant.keyWith(["view"]);
    const refused = await viewer.post("/rules/auto-matching/train");
    expect([refused.status, refused.body.code]).toEqual([403, "PERMISSION_DENIED"]);
    const train = await tenant.api.post("/rules/auto-matching/train");
    expect(train.status, JSON.stringify(train.body)).toBe(202);
    await jobDone(tenant, train.body.job_id);
    const status = (await viewer.get("/rules/auto-matching")).body;
    expect(status).toMatchObject({ example_files: 11, stale: false, labels: [{ kind: "folder", label: recipes.id, examples: 5 }] });

    const dry = (await tenant.api.post("/rules/dry-run", { conditions: [{ field: "predicted_folder_id", op: "equals", value: recipes.id }, { field: "folder_id", op: "not_exists" }] })).body;
    expect(dry.files.map((f: any) => f.id)).toEqual([cake]);

    const bad = await tenant.api.post("/rules/dry-run", { conditions: [{ field: "predicted_folder_id", op: "equals", value: recipes.id, min_score: 0 }] });
    expect([bad.status, bad.body.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect(bad.body.detail).toContain("conditions.0.min_score");

    // Another organization has its own model (none yet).
    const stranger = await server.tenant({ tier: "CUSTOM" });
    expect((await stranger.api.get("/rules/auto-matching")).body).toMatchObject({ trained_at: null, labels: [] });
    expect((await stranger.api.post("/rules/dry-run", { conditions: [{ field: "predicted_folder_id", op: "equals", value: recipes.id }] })).body.matched_count).toBe(0);
  });
});
