/**
 * Saving links on the data-access port, on SQLite and on PostgreSQL: a save's duplicate check
 * (`findLink`) reads through its transaction, and saves of one page at once make one file (on
 * PostgreSQL the organization's saves take turns under a transaction lock). The HTTP side is
 * test/links.test.ts. The PostgreSQL half skips, saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import type { Principal } from "../src/auth/principal.ts";
import { ManualClock } from "../src/clock.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { FileRepository } from "../src/files/file-repository.ts";
import { JobStore } from "../src/jobs/job-store.ts";
import { JobRunner } from "../src/jobs/runner.ts";
import type { LinkDeps } from "../src/links/deps.ts";
import { crawlOf, findLink } from "../src/links/link-crawls.ts";
import { saveLink } from "../src/links/links.ts";
import { Logger } from "../src/log.ts";
import { portEngines } from "./support/port-engines.ts";

const { engines } = portEngines("links", { connections: 4 });

describe.each(engines)("saving links on the port, on $name", ({ client }) => {
  const clock = new ManualClock(Date.UTC(2032, 0, 1));

  function links(sql: SqlClient): LinkDeps {
    return { sql, clock, files: new FileRepository(sql, clock), jobs: new JobRunner(new JobStore(sql), clock, new Logger("error"), { leaseMs: 60_000 }) } as unknown as LinkDeps;
  }

  async function principal(sql: SqlClient): Promise<Principal> {
    const orgId = crypto.randomUUID();
    await sql.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x')", [orgId, orgId, orgId]);
    await sql.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x')", [crypto.randomUUID(), orgId]);
    return { keyId: "key-1", orgId, tier: "STARTER", permissions: new Set() } as unknown as Principal;
  }

  test("a second save of a page answers with the first file; saves of one page at once make one file; skip_duplicates false makes another", async () => {
    const sql = client();
    const ctx = links(sql);
    const owner = await principal(sql);
    const first = await saveLink(ctx, owner, { url: "https://news.example/story?b=2&a=1", extract_images: false });
    expect(first.status).toBe("created");
    expect(await crawlOf(sql, first.file.id)).toMatchObject({ domain: "news.example", extractImages: false, status: "pending" });
    const again = await saveLink(ctx, owner, { url: "https://news.example/story?a=1&b=2" });
    expect(again).toMatchObject({ status: "duplicate", file: { id: first.file.id } });
    expect((await findLink(sql, owner.orgId, "https://news.example/story?a=1&b=2"))?.id).toBe(first.file.id);
    // Another organization's save of the page is its own.
    expect((await saveLink(ctx, await principal(sql), { url: "https://news.example/story?a=1&b=2" })).status).toBe("created");

    const at = await Promise.all(Array.from({ length: 4 }, () => saveLink(ctx, owner, { url: "https://news.example/other" })));
    expect(at.filter((o) => o.status === "created")).toHaveLength(1);
    expect(new Set(at.map((o) => o.file.id)).size).toBe(1);

    expect((await saveLink(ctx, owner, { url: "https://news.example/other", skip_duplicates: false })).status).toBe("created");
    const n = await sql.one<{ n: number }>("SELECT count(*) AS n FROM files WHERE org_id = ? AND media_type = 'link'", [owner.orgId]);
    expect(Number(n!.n)).toBe(3);
  });
});
