/**
 * Tenancy and accounts on the data-access port (docs/scale-out.md) behave the same on SQLite and
 * on PostgreSQL: organizations (with their Default project, names unique case-insensitively),
 * projects (ordered, named uniquely even when two creations race, the Default project kept),
 * folders (a tree with unique sibling names, bounded depth, moved with their files to another
 * project, deleted only when empty; a watched folder's path made once when two files ask at once),
 * API keys (FREE refused, the key authenticates until revoked, last use written once a minute),
 * users and memberships (the last owner kept), sessions (sliding, rotated, revoked, pruned),
 * mailed tokens (single use, invitations listed and withdrawn), the sign-in throttle, the first
 * run (one owner even when two requests race) and linked identities. Their HTTP sides are tested
 * in accounts.test.ts, auth.test.ts, projects.test.ts, folders.test.ts, watch-folders.test.ts and
 * oidc.test.ts. The PostgreSQL half skips, saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { portEngines } from "./support/port-engines.ts";
import { createOrganization, findOrganization, listOrganizations, OrganizationError, requireOrganization } from "../src/tenancy/organizations.ts";
import { createProject, defaultProjectId, deleteProject, getProject, listProjects, updateProject } from "../src/tenancy/projects.ts";
import { ApiKeyError, authenticateKey, createApiKey, listApiKeys, revokeApiKey, revokeApiKeyOf } from "../src/auth/api-keys.ts";
import { createUser, findUserByEmail, listUsers, membership, membershipsOf, removeMembership, setMembership, UserError } from "../src/accounts/users.ts";
import { authenticateSession, createSession, pruneSessions, revokeSession, revokeUserSessions, rotateSession } from "../src/accounts/sessions.ts";
import { consumeToken, issueToken, peekToken, pendingInvitations, pruneTokens, revokeInvitation } from "../src/accounts/email-tokens.ts";
import { ACCOUNT_RULE, clearFailures, lockedFor, recordFailure } from "../src/accounts/throttle.ts";
import { FirstRun } from "../src/accounts/first-run.ts";
import { findIdentity, identitiesOf, linkIdentity, unlinkIdentity } from "../src/accounts/oidc.ts";
import { createFolder, deleteFolder, getFolder, listFolders, MAX_FOLDER_DEPTH, updateFolder } from "../src/folders/folders.ts";
import { addWatchedFolder, ensureFolderPath, syncWatchSetting } from "../src/watch/watched-folders.ts";

const { engines } = portEngines("accounts", { connections: 4 });

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
const LIFETIMES = { idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000 };

describe.each(engines)("tenancy and accounts on the port, on $name", ({ client }) => {
  test("organizations: created with their Default project, names unique whatever their case, listed by name", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const name = unique("Acme");
    const org = await createOrganization(db, clock, `  ${name} `, "STARTER");
    expect(org).toMatchObject({ name, tier: "STARTER", created_at: "2031-05-01T00:00:00.000Z" });
    expect(await findOrganization(db, name.toUpperCase())).toEqual(org);
    await expect(createOrganization(db, clock, name.toLowerCase(), "FREE")).rejects.toThrow(OrganizationError);
    await expect(createOrganization(db, clock, "a/b", "FREE")).rejects.toThrow(/must not contain/);
    await expect(requireOrganization(db, unique("nobody"))).rejects.toThrow(/no organization named/);
    const project = await getProject(db, org.id, await defaultProjectId(db, org.id));
    expect(project).toMatchObject({ name: "Default", is_default: true, folder_count: 0, file_count: 0 });
    const bravo = await createOrganization(db, clock, unique("Bravo"), "FREE");
    const alpha = await createOrganization(db, clock, unique("alpha"), "FREE");
    const ours = new Set([org.id, bravo.id, alpha.id]);
    expect((await listOrganizations(db)).filter((o) => ours.has(o.id)).map((o) => o.id)).toEqual([org.id, alpha.id, bravo.id]);
  });

  test("projects: Default first then by name; names unique even when two creations race; the Default project kept; only empty ones deleted", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, unique("Projects"), "PROFESSIONAL");
    const zeta = await createProject(db, clock, org.id, "key-1", { name: "zeta", color: "#abc" });
    expect(zeta).toMatchObject({ name: "zeta", color: "#abc", project_type: "general", is_default: false, created_by: "key-1", folder_count: 0, file_count: 0 });
    const raced = await Promise.allSettled([createProject(db, clock, org.id, null, { name: "Alpha" }), createProject(db, clock, org.id, null, { name: "ALPHA" })]);
    expect(raced.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(String((raced.find((r) => r.status === "rejected") as PromiseRejectedResult).reason.code)).toBe("PROJECT_NAME_EXISTS");
    const listed = await listProjects(db, org.id, 10, 0);
    expect([listed.total, listed.items.map((p) => p.name.toLowerCase())]).toEqual([3, ["default", "alpha", "zeta"]]);
    expect((await listProjects(db, org.id, 1, 1)).items.map((p) => p.name)).toEqual([listed.items[1]!.name]);
    clock.advance(1_000);
    const renamed = await updateProject(db, clock, org.id, zeta.id, { name: "Omega", description: "d" });
    expect(renamed).toMatchObject({ name: "Omega", description: "d", updated_at: "2031-05-01T00:00:01.000Z" });
    const defaultId = await defaultProjectId(db, org.id);
    await expect(updateProject(db, clock, org.id, defaultId, { name: "Other" })).rejects.toMatchObject({ code: "BUSINESS_RULE_VIOLATION" });
    await expect(deleteProject(db, org.id, defaultId)).rejects.toMatchObject({ code: "BUSINESS_RULE_VIOLATION" });
    await db.run("INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, deleted_at) VALUES (?, ?, ?, 'image', 'a.jpg', 'x', 'x', 'x')", [crypto.randomUUID(), org.id, zeta.id]);
    await expect(deleteProject(db, org.id, zeta.id)).rejects.toThrow(/1 deleted file\(s\) still recoverable/);
    const other = await createOrganization(db, clock, unique("Other"), "PROFESSIONAL");
    await expect(getProject(db, other.id, zeta.id)).rejects.toMatchObject({ code: "PROJECT_NOT_FOUND" });
    const alpha = listed.items[1]!;
    await deleteProject(db, org.id, alpha.id);
    expect((await listProjects(db, org.id, 10, 0)).total).toBe(2);
  });

  test("projects: at most 50 an organization", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, unique("Many"), "PROFESSIONAL");
    for (let i = 1; i < 50; i++) await createProject(db, clock, org.id, null, { name: `p${i}` });
    await expect(createProject(db, clock, org.id, null, { name: "one too many" })).rejects.toMatchObject({ code: "PROJECT_LIMIT_REACHED" });
  });

  test("folders: a tree with paths and counts; sibling names unique even when two creations race; bounded depth; only empty ones deleted", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, unique("Folders"), "PROFESSIONAL");
    const top = await createFolder(db, clock, org.id, "key-1", { name: "2031" });
    expect(top).toMatchObject({ name: "2031", parent_id: null, path: [{ id: top.id, name: "2031" }], folder_count: 0, file_count: 0, created_by: "key-1" });
    const raced = await Promise.allSettled([createFolder(db, clock, org.id, null, { name: "May", parent_id: top.id }), createFolder(db, clock, org.id, null, { name: "MAY", parent_id: top.id })]);
    expect(raced.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect((raced.find((r) => r.status === "rejected") as PromiseRejectedResult).reason.code).toBe("FOLDER_NAME_EXISTS");
    const may = (raced.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<Awaited<ReturnType<typeof createFolder>>>).value;
    expect(may.path.map((f) => f.name)).toEqual(["2031", may.name]);
    await createFolder(db, clock, org.id, null, { name: "April", parent_id: top.id });
    expect((await listFolders(db, org.id, { parentId: top.id }, 10, 0)).items.map((f) => f.name)).toEqual(["April", may.name]);
    expect((await getFolder(db, org.id, top.id)).folder_count).toBe(2);
    let deepest = may.id;
    for (let depth = 3; depth <= MAX_FOLDER_DEPTH; depth++) deepest = (await createFolder(db, clock, org.id, null, { name: `d${depth}`, parent_id: deepest })).id;
    await expect(createFolder(db, clock, org.id, null, { name: "too deep", parent_id: deepest })).rejects.toMatchObject({ code: "FOLDER_DEPTH_EXCEEDED" });
    await expect(deleteFolder(db, org.id, top.id)).rejects.toMatchObject({ code: "FOLDER_NOT_EMPTY" });
    await expect(updateFolder(db, clock, org.id, top.id, { parent_id: may.id })).rejects.toMatchObject({ code: "BUSINESS_RULE_VIOLATION" });
    const other = await createOrganization(db, clock, unique("Other"), "PROFESSIONAL");
    await expect(getFolder(db, other.id, top.id)).rejects.toMatchObject({ code: "FOLDER_NOT_FOUND" });
    await deleteFolder(db, org.id, deepest);
    await expect(getFolder(db, org.id, deepest)).rejects.toMatchObject({ code: "FOLDER_NOT_FOUND" });
  });

  test("folders: moved to another project with their subtree and its files", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, unique("Moves"), "PROFESSIONAL");
    const target = await createProject(db, clock, org.id, null, { name: "Archive" });
    const top = await createFolder(db, clock, org.id, null, { name: "Scans" });
    const child = await createFolder(db, clock, org.id, null, { name: "Old", parent_id: top.id });
    const fileId = crypto.randomUUID();
    await db.run("INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at) VALUES (?, ?, ?, ?, 'image', 'a.jpg', 'x', 'x')", [fileId, org.id, top.project_id, child.id]);
    clock.advance(1_000);
    const moved = await updateFolder(db, clock, org.id, top.id, { project_id: target.id, name: "Scans 2031" });
    expect(moved).toMatchObject({ name: "Scans 2031", project_id: target.id, parent_id: null, updated_at: "2031-05-01T00:00:01.000Z" });
    expect((await getFolder(db, org.id, child.id)).project_id).toBe(target.id);
    expect(await db.one("SELECT project_id, updated_at FROM files WHERE id = ?", [fileId])).toEqual({ project_id: target.id, updated_at: "2031-05-01T00:00:01.000Z" });
    expect((await getProject(db, org.id, target.id)).folder_count).toBe(2);
    expect((await listFolders(db, org.id, { projectId: target.id }, 10, 0)).items.map((f) => f.id)).toEqual([top.id]);
  });

  test("watched folders: the mapping's folders made once when asked twice at once; the setting's mappings replace the previous ones", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, unique("Watch"), "PROFESSIONAL");
    const projectId = await defaultProjectId(db, org.id);
    const [a, b] = await Promise.all([ensureFolderPath(db, clock, org.id, projectId, null, ["Drop", "Scans"]), ensureFolderPath(db, clock, org.id, projectId, null, ["Drop", "Scans"])]);
    expect(a).toBe(b);
    expect((await getFolder(db, org.id, a!)).path.map((f) => f.name)).toEqual(["Drop", "Scans"]);
    const dir = `/srv/${unique("in")}`;
    const row = await addWatchedFolder(db, clock, { path: dir, org: org.name, project: null, folder: "Drop/Scans" }, "cli");
    expect(row).toMatchObject({ path: dir, org_id: org.id, project_id: projectId, folder_id: a, origin: "cli", active: 1 });
    await expect(addWatchedFolder(db, clock, { path: dir, org: org.name, project: "Nowhere", folder: null }, "cli")).rejects.toThrow(/no project "Nowhere"/);
    const other = `/srv/${unique("in")}`;
    await syncWatchSetting(db, clock, [{ path: other, org: org.name, project: "Default", folder: null }]);
    await syncWatchSetting(db, clock, [{ path: dir, org: org.name, project: null, folder: null }]);
    const rows = await db.all<{ path: string; origin: string; active: number }>("SELECT path, origin, active FROM watched_folders WHERE path IN (?, ?) ORDER BY path", [dir, other].sort());
    expect(rows).toEqual([{ path: dir, origin: "setting", active: 1 }, { path: other, origin: "setting", active: 0 }].sort((x, y) => (x.path < y.path ? -1 : 1)));
  });

  test("API keys: FREE refused; a key authenticates with its organization's tier until revoked; its last use is written once a minute", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const free = await createOrganization(db, clock, unique("Free"), "FREE");
    await expect(createApiKey(db, clock, free.name)).rejects.toThrow(ApiKeyError);
    const org = await createOrganization(db, clock, unique("Keys"), "STARTER");
    const { key, info } = await createApiKey(db, clock, org.name, { name: "ci", permissions: ["view"] });
    expect(info).toMatchObject({ org_id: org.id, name: "ci", permissions: ["view"], display_prefix: key.slice(0, 12), last_used_at: null, revoked_at: null });
    const principal = await authenticateKey(db, clock, key);
    expect(principal).toMatchObject({ keyId: info.id, orgId: org.id, tier: "STARTER" });
    expect([...principal!.permissions]).toEqual(["view"]);
    const lastUsed = async () => (await listApiKeys(db, org.name))[0]!.last_used_at;
    expect(await lastUsed()).toBe("2031-05-01T00:00:00.000Z");
    clock.advance(30_000);
    await authenticateKey(db, clock, key);
    expect(await lastUsed()).toBe("2031-05-01T00:00:00.000Z");
    clock.advance(31_000);
    await authenticateKey(db, clock, key);
    expect(await lastUsed()).toBe("2031-05-01T00:01:01.000Z");
    expect(await authenticateKey(db, clock, `${key}x`)).toBeNull();
    expect(await authenticateKey(db, clock, "not-a-key")).toBeNull();
    const stranger = await createOrganization(db, clock, unique("Stranger"), "STARTER");
    expect(await revokeApiKeyOf(db, clock, stranger.id, info.id)).toBeNull();
    const revoked = await revokeApiKeyOf(db, clock, org.id, info.id);
    expect(revoked!.revoked_at).toBe("2031-05-01T00:01:01.000Z");
    clock.advance(5_000);
    expect((await revokeApiKey(db, clock, info.id)).revoked_at).toBe("2031-05-01T00:01:01.000Z");
    expect(await authenticateKey(db, clock, key)).toBeNull();
    await expect(revokeApiKey(db, clock, crypto.randomUUID())).rejects.toThrow(/no API key/);
  });

  test("users and memberships: one account per address; roles listed; the last owner is neither demoted nor removed", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, unique("Members"), "STARTER");
    const email = `${unique("ann")}@example.com`;
    const ann = await createUser(db, clock, { email, name: " Ann ", passwordHash: "h", verified: true });
    expect(ann).toMatchObject({ email, name: "Ann", email_verified_at: "2031-05-01T00:00:00.000Z", disabled_at: null });
    await expect(createUser(db, clock, { email: email.toUpperCase(), verified: false })).rejects.toThrow(UserError);
    expect((await findUserByEmail(db, email.toUpperCase()))!.id).toBe(ann.id);
    const bob = await createUser(db, clock, { email: `${unique("bob")}@example.com`, verified: false });
    await setMembership(db, clock, org.id, ann.id, "owner");
    await setMembership(db, clock, org.id, bob.id, "viewer");
    await expect(setMembership(db, clock, org.id, ann.id, "admin")).rejects.toMatchObject({ code: "LAST_OWNER" });
    await expect(removeMembership(db, org.id, ann.id)).rejects.toMatchObject({ code: "LAST_OWNER" });
    expect(await membership(db, org.id, bob.id)).toEqual({ org_id: org.id, org_name: org.name, tier: "STARTER", role: "viewer" });
    const listed = await listUsers(db, org.id);
    expect(listed.map((u) => [u.email, u.memberships.map((m) => m.role)])).toEqual([[ann.email, ["owner"]], [bob.email, ["viewer"]]]);
    expect(listed[0]).not.toHaveProperty("password_hash");
    await setMembership(db, clock, org.id, bob.id, "owner");
    await setMembership(db, clock, org.id, ann.id, "member");
    expect(await removeMembership(db, org.id, ann.id)).toBe(true);
    expect(await removeMembership(db, org.id, ann.id)).toBe(false);
    expect(await membershipsOf(db, ann.id)).toEqual([]);
  });

  test("sessions: the cookie's session with its role, sliding once a minute, rotated, revoked, pruned a day after they end", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, unique("Sessions"), "PROFESSIONAL");
    const user = await createUser(db, clock, { email: `${unique("sam")}@example.com`, verified: true });
    await setMembership(db, clock, org.id, user.id, "admin");
    const issued = await createSession(db, clock, LIFETIMES, { userId: user.id, orgId: org.id, ip: "10.0.0.1", userAgent: "test" });
    const session = await authenticateSession(db, clock, LIFETIMES, issued.sessionId);
    expect(session).toMatchObject({ userId: user.id, email: user.email, orgId: org.id, tier: "PROFESSIONAL", role: "admin", createdAt: "2031-05-01T00:00:00.000Z" });
    expect(session!.idleExpiresMs).toBe(Date.UTC(2031, 4, 1) + LIFETIMES.idleMs);
    clock.advance(20 * 60_000);
    expect((await authenticateSession(db, clock, LIFETIMES, issued.sessionId))!.idleExpiresMs).toBe(Date.UTC(2031, 4, 1, 0, 50));
    clock.advance(20 * 60_000);
    expect(await authenticateSession(db, clock, LIFETIMES, issued.sessionId)).not.toBeNull();
    const rotated = await rotateSession(db, clock, LIFETIMES, session!, { ip: null, userAgent: null });
    expect(rotated.expiresAtMs).toBe(issued.expiresAtMs);
    expect(await authenticateSession(db, clock, LIFETIMES, issued.sessionId)).toBeNull();
    const current = (await authenticateSession(db, clock, LIFETIMES, rotated.sessionId))!;
    await revokeSession(db, clock, current.idHash);
    expect(await authenticateSession(db, clock, LIFETIMES, rotated.sessionId)).toBeNull();
    const a = await createSession(db, clock, LIFETIMES, { userId: user.id, orgId: org.id, ip: null, userAgent: null });
    await createSession(db, clock, LIFETIMES, { userId: user.id, orgId: org.id, ip: null, userAgent: null });
    expect(await revokeUserSessions(db, clock, user.id)).toBe(2);
    expect(await authenticateSession(db, clock, LIFETIMES, a.sessionId)).toBeNull();
    const member = await createSession(db, clock, LIFETIMES, { userId: user.id, orgId: org.id, ip: null, userAgent: null });
    await db.run("DELETE FROM memberships WHERE org_id = ? AND user_id = ?", [org.id, user.id]);
    expect(await authenticateSession(db, clock, LIFETIMES, member.sessionId)).toBeNull();
    clock.advance(LIFETIMES.absoluteMs + 86_400_001);
    expect(await pruneSessions(db, clock)).toBeGreaterThanOrEqual(4);
    expect(await db.one("SELECT id_hash FROM user_sessions WHERE user_id = ?", [user.id])).toBeNull();
  });

  test("mailed tokens: single use; a newer one replaces the older; invitations listed per organization and withdrawn", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const org = await createOrganization(db, clock, unique("Tokens"), "STARTER");
    const email = `${unique("tia")}@example.com`;
    const first = await issueToken(db, clock, { kind: "password_reset", email });
    const second = await issueToken(db, clock, { kind: "password_reset", email });
    await expect(peekToken(db, clock, "password_reset", first.token)).rejects.toMatchObject({ code: "TOKEN_INVALID" });
    expect((await peekToken(db, clock, "password_reset", second.token)).email_key).toBe(email);
    await expect(consumeToken(db, clock, "verify_email", second.token)).rejects.toMatchObject({ code: "TOKEN_INVALID" });
    const used = await Promise.allSettled([consumeToken(db, clock, "password_reset", second.token), consumeToken(db, clock, "password_reset", second.token)]);
    expect(used.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    await issueToken(db, clock, { kind: "invite", email, orgId: org.id, role: "viewer" });
    clock.advance(1_000);
    const other = `${unique("uma")}@example.com`;
    await issueToken(db, clock, { kind: "invite", email: other, orgId: org.id, role: "admin" });
    expect((await pendingInvitations(db, clock, org.id)).map((i) => [i.email, i.role])).toEqual([[other, "admin"], [email, "viewer"]]);
    expect(await revokeInvitation(db, clock, org.id, email.toUpperCase())).toBe(true);
    expect(await revokeInvitation(db, clock, org.id, email)).toBe(false);
    expect((await pendingInvitations(db, clock, org.id)).map((i) => i.email)).toEqual([other]);
    clock.advance(8 * 86_400_000 + 7 * 86_400_000);
    expect(await pruneTokens(db, clock)).toBeGreaterThanOrEqual(4);
  });

  test("sign-in throttle: the fifth failure locks for a minute, the next doubles it; a success clears it", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const subject = `account:${unique("t")}`;
    for (let i = 0; i < 4; i++) await recordFailure(db, clock, subject, ACCOUNT_RULE);
    expect(await lockedFor(db, clock, subject)).toBe(0);
    await recordFailure(db, clock, subject, ACCOUNT_RULE);
    expect(await lockedFor(db, clock, subject)).toBe(60_000);
    await recordFailure(db, clock, subject, ACCOUNT_RULE);
    expect(await lockedFor(db, clock, subject)).toBe(120_000);
    await clearFailures(db, subject);
    expect(await lockedFor(db, clock, subject)).toBe(0);
  });

  test("linked identities: one user per identity, one identity per provider, the last way to sign in kept", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const ida = await createUser(db, clock, { email: `${unique("ida")}@example.com`, verified: true });
    const joe = await createUser(db, clock, { email: `${unique("joe")}@example.com`, passwordHash: "h", verified: true });
    const identity = { provider: "keycloak", issuer: "https://idp.example", subject: unique("sub"), email: ida.email };
    await linkIdentity(db, clock, { ...identity, userId: ida.id });
    await linkIdentity(db, clock, { ...identity, userId: ida.id });
    await expect(linkIdentity(db, clock, { ...identity, userId: joe.id })).rejects.toMatchObject({ code: "IDENTITY_ALREADY_LINKED" });
    await expect(linkIdentity(db, clock, { ...identity, subject: unique("sub"), userId: ida.id })).rejects.toMatchObject({ code: "IDENTITY_ALREADY_LINKED" });
    expect((await findIdentity(db, identity.issuer, identity.subject))!.user_id).toBe(ida.id);
    expect((await identitiesOf(db, ida.id)).map((i) => [i.provider, i.created_at])).toEqual([["keycloak", "2031-05-01T00:00:00.000Z"]]);
    await expect(unlinkIdentity(db, ida.id, "keycloak", false)).rejects.toMatchObject({ code: "LAST_SIGN_IN_METHOD" });
    expect(await unlinkIdentity(db, ida.id, "keycloak", true)).toBe(true);
    expect(await unlinkIdentity(db, ida.id, "keycloak", true)).toBe(false);
  });

  test("first run: two owners made at once give one owner; then it is closed", async () => {
    const db = client();
    await db.run("DELETE FROM identities");
    await db.run("DELETE FROM user_sessions");
    await db.run("DELETE FROM memberships");
    await db.run("DELETE FROM users");
    const firstRun = new FirstRun(db, new ManualClock(Date.UTC(2031, 4, 1)));
    expect(await firstRun.open()).toBe(true);
    const owner = (n: number) => firstRun.createOwner({ organization_name: unique(`Site ${n}`), email: `owner${n}@example.com`, password: "a long first-run passphrase 7" }, "127.0.0.1");
    const made = await Promise.allSettled([owner(1), owner(2)]);
    expect(made.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(String((made.find((r) => r.status === "rejected") as PromiseRejectedResult).reason.code)).toBe("SETUP_COMPLETE");
    expect(await firstRun.open()).toBe(false);
    const user = (made.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<{ id: string }>).value;
    expect((await membershipsOf(db, user.id)).map((m) => [m.role, m.tier])).toEqual([["owner", "CUSTOM"]]);
  });
});
