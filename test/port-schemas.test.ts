/**
 * Custom extraction schemas on the data-access port (docs/scale-out.md) behave the same on SQLite
 * and on PostgreSQL: created with their field count, listed newest first without their large
 * fields, replaced whole, deleted, names unique per organization whatever their case even when
 * two creations race, and invisible to other organizations. Their HTTP side is tested in
 * custom-schemas.test.ts. The PostgreSQL half skips, saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { createCustomSchema, deleteCustomSchema, getCustomSchema, listCustomSchemas, replaceCustomSchema } from "../src/custom-schemas/custom-schemas.ts";
import { createOrganization } from "../src/tenancy/organizations.ts";
import { portEngines } from "./support/port-engines.ts";

const { engines } = portEngines("schemas", { connections: 4 });

const SCHEMA = { type: "object", properties: { total: { type: "number" }, vendor: { type: "string" } } };

describe.each(engines)("custom extraction schemas on the port, on $name", ({ client }) => {
  test("created, listed newest first, replaced whole, deleted; names unique even when two creations race; other organizations see none", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, `Schemas-${crypto.randomUUID().slice(0, 8)}`, "PROFESSIONAL");
    const receipt = await createCustomSchema(db, clock, org.id, "key-1", { name: " Receipt ", description: "shop receipts", schema: SCHEMA, prompt_hint: "totals" });
    expect(receipt).toMatchObject({ name: "Receipt", description: "shop receipts", schema: SCHEMA, prompt_hint: "totals", field_count: 2, created_by: "key-1", created_at: "2031-05-01T00:00:00.000Z" });
    clock.advance(1_000);
    const raced = await Promise.allSettled([
      createCustomSchema(db, clock, org.id, null, { name: "Invoice", schema: SCHEMA }),
      createCustomSchema(db, clock, org.id, null, { name: "INVOICE", schema: SCHEMA }),
    ]);
    expect(raced.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect((raced.find((r) => r.status === "rejected") as PromiseRejectedResult).reason.code).toBe("CUSTOM_SCHEMA_NAME_EXISTS");
    const listed = await listCustomSchemas(db, org.id, 10, 0);
    expect([listed.total, listed.items.map((s) => s.name.toLowerCase())]).toEqual([2, ["invoice", "receipt"]]);
    expect(listed.items[0]).not.toHaveProperty("schema");
    clock.advance(1_000);
    const replaced = await replaceCustomSchema(db, clock, org.id, receipt.id, { name: "Till receipt", schema: { type: "object", properties: { total: { type: "number" } } } });
    expect(replaced).toMatchObject({ name: "Till receipt", description: null, prompt_hint: null, field_count: 1, updated_at: "2031-05-01T00:00:02.000Z" });
    await expect(replaceCustomSchema(db, clock, org.id, receipt.id, { name: "invoice", schema: SCHEMA })).rejects.toMatchObject({ code: "CUSTOM_SCHEMA_NAME_EXISTS" });
    const other = await createOrganization(db, clock, `Other-${crypto.randomUUID().slice(0, 8)}`, "PROFESSIONAL");
    await expect(getCustomSchema(db, other.id, receipt.id)).rejects.toMatchObject({ code: "CUSTOM_SCHEMA_NOT_FOUND" });
    await createCustomSchema(db, clock, other.id, null, { name: "Invoice", schema: SCHEMA });
    expect((await deleteCustomSchema(db, org.id, receipt.id)).name).toBe("Till receipt");
    await expect(deleteCustomSchema(db, org.id, receipt.id)).rejects.toMatchObject({ code: "CUSTOM_SCHEMA_NOT_FOUND" });
    expect((await listCustomSchemas(db, org.id, 10, 0)).total).toBe(1);
  });
});
