/**
 * Messages to the appliance's support (POST /support/contact): the only writer of
 * `support_messages`. Every message is stored (listed by `mediabox support list`) and, when
 * MEDIABOX_SUPPORT_EMAIL and SMTP are configured, a copy is mailed there in the background.
 * On the data-access port (db/sql-client.ts): the same functions run on SQLite and PostgreSQL.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import type { Mailer } from "../accounts/mailer.ts";

export interface SupportMessage {
  id: string;
  email: string;
  name: string | null;
  subject: string;
  message: string;
  user_id: string | null;
  org_id: string | null;
  ip: string | null;
  created_at: string;
  mailed_at: string | null;
}

export async function storeSupportMessage(
  db: SqlClient,
  clock: Clock,
  input: { email: string; name?: string | null; subject: string; message: string; userId: string | null; orgId: string | null; ip: string | null },
): Promise<SupportMessage> {
  const row: SupportMessage = {
    id: crypto.randomUUID(),
    email: input.email.trim(),
    name: input.name?.trim() || null,
    subject: input.subject.trim(),
    message: input.message,
    user_id: input.userId,
    org_id: input.orgId,
    ip: input.ip,
    created_at: isoAt(clock.now()),
    mailed_at: null,
  };
  await db.run(
    `INSERT INTO support_messages (id, email, name, subject, message, user_id, org_id, ip, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [row.id, row.email, row.name, row.subject, row.message, row.user_id, row.org_id, row.ip, row.created_at],
  );
  return row;
}

export function listSupportMessages(db: SqlClient, limit = 100): Promise<SupportMessage[]> {
  return db.all<SupportMessage>("SELECT * FROM support_messages ORDER BY created_at DESC, id LIMIT ?", [limit]);
}

/**
 * Mails a copy to the support address in the background (when one is set and SMTP is
 * configured) and records when it went out; the message is stored whatever happens to the mail.
 */
export function sendSupportCopy(db: SqlClient, clock: Clock, mailer: Mailer, to: string | null, message: SupportMessage): boolean {
  if (!to || !mailer.configured) return false;
  mailer.sendLater(
    {
      kind: "support",
      to,
      subject: `[support] ${message.subject}`,
      text: `From: ${message.name ? `${message.name} <${message.email}>` : message.email}\nOrganization: ${message.org_id ?? "-"}\nMessage id: ${message.id}\n\n${message.message}`,
    },
    () => db.run("UPDATE support_messages SET mailed_at = ? WHERE id = ?", [isoAt(clock.now()), message.id]),
  );
  return true;
}
