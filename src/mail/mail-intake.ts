/**
 * Mail intake: polls an organization's IMAP accounts (imapflow) and stores the attachments of the
 * messages its filters take (and, when asked, the message itself as a text document) through the
 * normal ingest path, with `source: mail` for rules; then flags the message (\Seen \Flagged) or
 * moves it. Messages are taken in UID order above the last one handled (per UIDVALIDITY), so a
 * message read meanwhile in a mail client is still taken, and one handled is never taken again.
 * Each message is claimed before its parts are stored, with the file ids they get: after a crash
 * it is finished with the same ids (ingesting is idempotent by id), never stored twice.
 *
 * The server is reached under the mail egress policy (net/egress-policy.ts): every address the host name
 * resolves to must be public unless MEDIABOX_MAIL_ALLOW_CIDRS allows it, and the connection goes
 * to the checked address (TLS still verifies the host name).
 */
import { createHash } from "node:crypto";
import { lookup } from "node:dns/promises";
import { mkdirSync, rmSync } from "node:fs";
import { DETECTION_HEAD_BYTES, stageStream } from "../storage/stage-stream.ts";
import { isIP } from "node:net";
import { extname, join } from "node:path";
import type { Readable } from "node:stream";
import { ImapFlow, type MessageStructureObject } from "imapflow";
import type { MailDeps } from "./deps.ts";
import { errorMessage } from "../errors.ts";
import { originalBlobKey } from "../files/blob-keys.ts";
import { detectType } from "../ingest/detect.ts";
import { ingestStagedFile, sizeLimitViolation } from "../ingest/ingest.ts";
import { DEFAULT_UPLOAD_OPTIONS } from "../ingest/options.ts";
import type { QueueDefinition } from "../jobs/runner.ts";
import { checkEgressAddress, egressPolicy } from "../net/egress-policy.ts";
import {
  accountForPoll,
  dueAccounts,
  mailboxRenumbered,
  messageRow,
  pollEnded,
  recordMessage,
  type MailAccountSecret,
  type MessagePart,
} from "./mail-accounts.ts";

/** The part id given to the message's own text when it is stored as a document. */
const BODY_PART = "body";
/** Largest part downloaded (the upload-intent ceiling; the streaming limits refuse most before). */
const MAX_PART_BYTES = 5 * 1024 ** 3;

/** The parts of a message that are attachments: leaves with a file name or an attachment disposition. */
export function attachmentsOf(structure: MessageStructureObject | undefined): { part: string; filename: string; type: string }[] {
  const found: { part: string; filename: string; type: string }[] = [];
  const walk = (node: MessageStructureObject) => {
    if (node.childNodes?.length) {
      for (const child of node.childNodes) walk(child);
      return;
    }
    const name = node.dispositionParameters?.filename ?? node.parameters?.name;
    if (node.disposition === "attachment" || name) found.push({ part: node.part ?? "1", filename: name ?? `attachment-${node.part ?? "1"}`, type: node.type.toLowerCase() });
  };
  if (structure) walk(structure);
  return found;
}

/** The first text/plain leaf that is not an attachment: the message's own text. */
function textPartOf(structure: MessageStructureObject | undefined): string | null {
  if (!structure) return null;
  if (structure.childNodes?.length) {
    for (const child of structure.childNodes) {
      const found = textPartOf(child);
      if (found) return found;
    }
    return null;
  }
  const isAttachment = structure.disposition === "attachment" || structure.dispositionParameters?.filename || structure.parameters?.name;
  return structure.type.toLowerCase() === "text/plain" && !isAttachment ? (structure.part ?? "1") : null;
}

/** Whether an attachment is of one of the wanted types (extensions or media types, `image/*`); any when none are named. */
export function wantedType(types: string[], attachment: { filename: string; type: string }): boolean {
  if (!types.length) return true;
  const ext = extname(attachment.filename).slice(1).toLowerCase();
  return types.some((t) => (t.includes("/") ? (t.endsWith("/*") ? attachment.type.startsWith(t.slice(0, -1)) : attachment.type === t) : t === ext));
}

/** The one address of the host the policy allows connecting to (every address it has must be allowed). */
async function checkedAddress(ctx: MailDeps, host: string): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, "");
  const addresses = isIP(bare) ? [bare] : (await lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
  if (!addresses.length) throw new Error(`host not found (${host})`);
  for (const address of addresses) {
    const verdict = checkEgressAddress(egressPolicy(ctx.config, "mail"), address);
    if (!verdict.ok) throw new Error(verdict.reason);
  }
  return addresses[0]!;
}

function safeFilename(name: string): string {
  const cleaned = name.replace(/[/\\\u0000-\u001f]/g, "_").trim().slice(0, 200);
  return cleaned || "attachment";
}

export interface PollSummary {
  account_id: string;
  messages_seen: number;
  messages_taken: number;
  messages_skipped: number;
  files_stored: number;
  files_failed: number;
}

/** One poll of an account; errors of the connection are recorded on the account (last_error). */
export async function pollAccount(ctx: MailDeps, accountId: string, signal: AbortSignal): Promise<PollSummary> {
  const summary: PollSummary = { account_id: accountId, messages_seen: 0, messages_taken: 0, messages_skipped: 0, files_stored: 0, files_failed: 0 };
  const account = await accountForPoll(ctx.sql, ctx.cloud.vault, accountId);
  if (!account) return summary;
  let client: ImapFlow | null = null;
  try {
    const address = await checkedAddress(ctx, account.host);
    client = new ImapFlow({
      host: address,
      port: account.port,
      secure: account.tls === "implicit",
      ...(isIP(account.host.replace(/^\[|\]$/g, "")) ? {} : { servername: account.host }),
      doSTARTTLS: account.tls === "starttls" ? true : account.tls === "none" ? false : undefined,
      auth: { user: account.username, pass: account.password },
      logger: false,
      disableAutoIdle: true,
      connectionTimeout: 20_000,
      greetingTimeout: 15_000,
      socketTimeout: 120_000,
    });
    // A dropped connection is reported by the command that meets it; the event must not go unheard.
    client.on("error", (err: unknown) => ctx.log.debug("imap connection error", { account_id: accountId, err: errorMessage(err) }));
    await client.connect();
    const lock = await client.getMailboxLock(account.mailbox);
    try {
      const mailbox = client.mailbox;
      const uidValidity = String(mailbox ? mailbox.uidValidity : "0");
      let lastUid = account.lastUid;
      if (account.uidValidity !== uidValidity) {
        await mailboxRenumbered(ctx.sql, account.id, uidValidity);
        lastUid = 0;
      }
      // "n:*" also answers the last message when its UID is below n: keep only the new ones.
      const uids = ((await client.search({ uid: `${lastUid + 1}:*` }, { uid: true })) || []).filter((uid) => uid > lastUid).sort((a, b) => a - b);
      for (const uid of uids) {
        signal.throwIfAborted();
        summary.messages_seen += 1;
        await takeMessage(ctx, client, account, uidValidity, uid, summary);
        await pollEnded(ctx.sql, ctx.clock, account.id, { error: null, uidValidity, lastUid: uid });
      }
    } finally {
      lock.release();
    }
    await pollEnded(ctx.sql, ctx.clock, account.id, { error: null });
  } catch (err) {
    if (signal.aborted) throw err;
    const why = errorMessage(err);
    ctx.log.warn("mail poll failed", { account_id: accountId, err: why });
    await pollEnded(ctx.sql, ctx.clock, account.id, { error: why });
  } finally {
    await client?.logout().catch(() => client?.close());
  }
  return summary;
}

async function takeMessage(ctx: MailDeps, client: ImapFlow, account: MailAccountSecret, uidValidity: string, uid: number, summary: PollSummary): Promise<void> {
  const previous = await messageRow(ctx.sql, account.id, uidValidity, uid);
  if (previous && previous.status !== "ingesting") {
    // Handled before a crash that came before the mailbox was told: tell it now.
    if (previous.status === "done") await afterSuccess(client, account, uid);
    return;
  }
  const message = await client.fetchOne(String(uid), { envelope: true, bodyStructure: true, internalDate: true }, { uid: true });
  if (!message) return;
  const from = message.envelope?.from?.[0];
  const sender = from ? `${from.name ? `${from.name} ` : ""}<${from.address ?? ""}>` : null;
  const subject = message.envelope?.subject ?? null;
  const base = {
    account_id: account.id, uid_validity: uidValidity, uid, message_id: message.envelope?.messageId ?? null, subject, sender,
    received_at: message.internalDate ? new Date(message.internalDate).toISOString() : null,
  };
  const skip = async (why: string) => {
    summary.messages_skipped += 1;
    await recordMessage(ctx.sql, ctx.clock, { ...base, status: "skipped", parts: [], error: why });
  };
  if (account.from_contains && !(sender ?? "").toLowerCase().includes(account.from_contains.toLowerCase())) return skip(`the sender does not contain "${account.from_contains}"`);
  if (account.subject_contains && !(subject ?? "").toLowerCase().includes(account.subject_contains.toLowerCase())) return skip(`the subject does not contain "${account.subject_contains}"`);
  const attachments = attachmentsOf(message.bodyStructure).filter((a) => wantedType(account.attachment_types, a));
  const bodyPart = account.ingest_body ? textPartOf(message.bodyStructure) : null;
  if (!attachments.length && !bodyPart) {
    return skip(account.attachment_types.length ? `no attachment of the types ${account.attachment_types.join(", ")}` : "no attachment");
  }
  const parts: MessagePart[] = previous
    ? (JSON.parse(previous.parts) as MessagePart[])
    : [
        ...(bodyPart ? [{ part: BODY_PART, filename: `${safeFilename(subject ?? "message").slice(0, 120)}.txt`, file_id: crypto.randomUUID(), status: "pending" as const, error: null }] : []),
        ...attachments.map((a) => ({ part: a.part, filename: safeFilename(a.filename), file_id: crypto.randomUUID(), status: "pending" as const, error: null })),
      ];
  await recordMessage(ctx.sql, ctx.clock, { ...base, status: "ingesting", parts, error: null });
  summary.messages_taken += 1;
  for (const part of parts) {
    if (part.status !== "pending") continue;
    try {
      await storePart(ctx, client, account, uid, part, bodyPart, { subject, sender, date: base.received_at });
      part.status = "stored";
      summary.files_stored += 1;
    } catch (err) {
      part.status = "failed";
      part.error = errorMessage(err);
      summary.files_failed += 1;
    }
    await recordMessage(ctx.sql, ctx.clock, { ...base, status: "ingesting", parts, error: null });
  }
  const stored = parts.filter((p) => p.status === "stored").length;
  await recordMessage(ctx.sql, ctx.clock, { ...base, status: stored ? "done" : "failed", parts, error: stored ? null : `no part could be stored; first: ${parts[0]?.error}` });
  if (stored) await afterSuccess(client, account, uid);
}

async function afterSuccess(client: ImapFlow, account: MailAccountSecret, uid: number): Promise<void> {
  if (account.after_action === "move" && account.move_to) {
    // Created when missing; an existing one makes create fail, which is fine.
    await client.mailboxCreate(account.move_to).catch(() => {});
    const moved = await client.messageMove(String(uid), account.move_to, { uid: true });
    if (!moved) throw new Error(`the message was stored but could not be moved to "${account.move_to}" (does the mailbox exist? hierarchy separators differ between servers)`);
  } else {
    await client.messageFlagsAdd(String(uid), ["\\Seen", "\\Flagged"], { uid: true });
  }
}

async function storePart(
  ctx: MailDeps,
  client: ImapFlow,
  account: MailAccountSecret,
  uid: number,
  part: MessagePart,
  bodyPart: string | null,
  header: { subject: string | null; sender: string | null; date: string | null },
): Promise<void> {
  if (await ctx.files.exists(part.file_id)) return;
  const scratch = join(ctx.dataDir.scratch, `mail-${part.file_id}`);
  mkdirSync(ctx.dataDir.scratch, { recursive: true });
  try {
    let staged;
    if (part.part === BODY_PART) {
      const download = await client.download(String(uid), bodyPart!, { uid: true });
      const text = download.content ? await readText(download.content) : "";
      const document = [`From: ${header.sender ?? ""}`, `Subject: ${header.subject ?? ""}`, `Date: ${header.date ?? ""}`, "", text].join("\n");
      await Bun.write(scratch, document);
      const bytes = new TextEncoder().encode(document);
      staged = { size: bytes.byteLength, sha256: createHash("sha256").update(bytes).digest("hex"), head: bytes.subarray(0, DETECTION_HEAD_BYTES) };
    } else {
      const download = await client.download(String(uid), part.part, { uid: true });
      if (!download.content) throw new Error("the part is gone from the message");
      staged = await stageStream(download.content, scratch, MAX_PART_BYTES);
    }
    const detection = await detectType(ctx.kinds.uploaded(), staged.head, part.filename, scratch);
    if (!detection.ok) throw new Error(`unsupported or unsafe file: ${detection.reason}`);
    const tooLarge = sizeLimitViolation(ctx.kinds, detection.type, staged.size);
    if (tooLarge) throw new Error(tooLarge);
    await ingestStagedFile(ctx, scratch, {
      id: part.file_id,
      orgId: account.orgId,
      filename: part.filename,
      size: staged.size,
      sha256: staged.sha256,
      type: detection.type,
      blobKey: originalBlobKey(account.orgId, part.file_id),
      uploadMethod: "streaming",
      sessionId: null,
      uploadedBy: null,
      options: { ...DEFAULT_UPLOAD_OPTIONS, tags: account.tags },
      placement: { projectId: account.project_id, folderId: account.folder_id },
      origin: { source: "mail", detail: `${account.name}: ${header.sender ?? ""} "${header.subject ?? ""}"` },
    });
  } finally {
    rmSync(scratch, { force: true });
  }
}

async function readText(content: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of content as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > 10 * 1024 ** 2) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function mailPollQueue(ctx: MailDeps): QueueDefinition<"mail.poll"> {
  return {
    name: "mail.poll",
    concurrency: 2,
    timeoutMs: 60 * 60 * 1000,
    async handler(job) {
      return [await pollAccount(ctx, job.payload.accountId, job.signal)];
    },
  };
}

/** Queues a poll of every account whose interval has passed (looked at every few seconds). */
export class MailScheduler {
  private timer: ReturnType<typeof setInterval> | null = null;
  /** The look in progress: the next tick skips rather than overlaps it. */
  private ticking: Promise<void> | null = null;

  constructor(private readonly ctx: MailDeps) {}

  start(everyMs = 5_000): void {
    const tick = () => {
      this.ticking ??= this.queueDuePolls()
        .catch((err) => this.ctx.log.warn("mail poll scheduling failed", { err: errorMessage(err) }))
        .finally(() => (this.ticking = null));
    };
    tick();
    this.timer = setInterval(tick, everyMs);
  }

  private async queueDuePolls(): Promise<void> {
    for (const account of await dueAccounts(this.ctx.sql, this.ctx.clock.now())) {
      await this.ctx.jobs.submit({ queue: "mail.poll", orgId: account.org_id, payload: { accountId: account.id }, maxAttempts: 1, dedupeKey: `mail.poll:${account.id}` });
    }
  }

  /** Stops looking; resolves once a look in progress has queued its polls. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
  }
}
