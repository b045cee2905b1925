/**
 * A real IMAP server for tests: Debian's Dovecot (`dovecot-imapd`, installed by .ci/run) started
 * with its own configuration, mail store and one user in a temporary directory, listening on a
 * free loopback port without TLS. Stopped (by its own pid) and removed with `stop()`.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ImapFlow } from "imapflow";
import { waitFor } from "./polling.ts";
import { tempDir } from "./temp-dir.ts";
import { freePort } from "./free-port.ts";

const DOVECOT = "/usr/sbin/dovecot";

export interface Dovecot {
  port: number;
  user: string;
  password: string;
  /** A logged-in client of the test user (log it out when done). */
  client(): Promise<ImapFlow>;
  /** Appends a raw RFC 822 message to a mailbox; returns its UID. */
  append(raw: string, mailbox?: string): Promise<number>;
  /** The flags of every message of a mailbox, by subject. */
  flagsBySubject(mailbox?: string): Promise<Record<string, string[]>>;
  stop(): Promise<void>;
}

function idOf(name: string): number {
  const line = readFileSync("/etc/passwd", "utf8").split("\n").find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`no system user ${name} (is dovecot-imapd installed?)`);
  return Number(line.split(":")[2]);
}

export async function startDovecot(): Promise<Dovecot> {
  if (!existsSync(DOVECOT)) throw new Error(`${DOVECOT} is missing: install Debian's dovecot-imapd (apt-get install dovecot-imapd; .ci/run does)`);
  const dir = tempDir("mediabox-dovecot-");
  chmodSync(dir, 0o755);
  const port = freePort();
  const user = "scanner@example.com";
  const password = "imap-test-password";
  for (const sub of ["run", "state", "mail"]) mkdirSync(join(dir, sub), { recursive: true });
  const uid = idOf("dovecot");
  chownSync(join(dir, "mail"), uid, uid);
  writeFileSync(join(dir, "users"), `${user}:{PLAIN}${password}\n`);
  writeFileSync(
    join(dir, "dovecot.conf"),
    `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = dovecot
default_login_user = dovenull
mail_location = maildir:${dir}/mail/%u
mail_uid = dovecot
mail_gid = dovecot
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=dovecot gid=dovecot home=${dir}/mail/%u
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
`,
  );
  const proc = Bun.spawn([DOVECOT, "-F", "-c", join(dir, "dovecot.conf")], { stdout: "ignore", stderr: "pipe" });
  const client = async () => {
    const c = new ImapFlow({ host: "127.0.0.1", port, secure: false, doSTARTTLS: false, auth: { user, pass: password }, logger: false });
    c.on("error", () => {});
    await c.connect();
    return c;
  };
  await waitFor(async () => {
    try {
      await (await client()).logout();
      return true;
    } catch {
      if (proc.exitCode !== null) throw new Error(`dovecot exited (${proc.exitCode}): ${await new Response(proc.stderr).text()}`);
      return false;
    }
  }, { what: "dovecot to accept logins", timeoutMs: 30_000 });
  return {
    port,
    user,
    password,
    client,
    async append(raw, mailbox = "INBOX") {
      const c = await client();
      try {
        const result = await c.append(mailbox, raw);
        return result ? Number(result.uid) : 0;
      } finally {
        await c.logout();
      }
    },
    async flagsBySubject(mailbox = "INBOX") {
      const c = await client();
      const out: Record<string, string[]> = {};
      try {
        const lock = await c.getMailboxLock(mailbox);
        try {
          for await (const m of c.fetch("1:*", { envelope: true, flags: true })) out[m.envelope?.subject ?? ""] = [...(m.flags ?? [])].sort();
        } finally {
          lock.release();
        }
      } catch (err) {
        if (!/Mailbox doesn't exist|NONEXISTENT/i.test(String(err)) && !String((err as { responseText?: string }).responseText ?? "").match(/doesn't exist/i)) throw err;
      } finally {
        await c.logout();
      }
      return out;
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** A multipart message with the given attachments (base64). */
export function mimeMessage(options: { from: string; subject: string; text: string; attachments?: { filename: string; type: string; bytes: Uint8Array }[] }): string {
  const boundary = `b-${crypto.randomUUID()}`;
  const lines = [
    `From: ${options.from}`,
    "To: scanner@example.com",
    `Subject: ${options.subject}`,
    `Message-ID: <${crypto.randomUUID()}@example.com>`,
    "MIME-Version: 1.0",
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    "",
    `--${boundary}`,
    "Content-Type: text/plain; charset=utf-8",
    "",
    options.text,
  ];
  for (const a of options.attachments ?? []) {
    lines.push(
      `--${boundary}`,
      `Content-Type: ${a.type}; name="${a.filename}"`,
      `Content-Disposition: attachment; filename="${a.filename}"`,
      "Content-Transfer-Encoding: base64",
      "",
      Buffer.from(a.bytes).toString("base64").replace(/.{76}/g, "$&\r\n"),
    );
  }
  lines.push(`--${boundary}--`, "");
  return lines.join("\r\n");
}
