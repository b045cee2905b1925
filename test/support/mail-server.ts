/**
 * A local SMTP server for tests (smtp-server from npm on 127.0.0.1, port 0): it accepts every
 * mail and keeps it, so a test can wait for the verification or reset mail and follow its link.
 */
import { SMTPServer } from "smtp-server";
import { waitFor } from "./polling.ts";

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export class MailServer {
  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
    readonly received: ReceivedMail[],
  ) {}

  static async start(): Promise<MailServer> {
    const received: ReceivedMail[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            // Quoted-printable soft line breaks would split links; undo them.
            raw: Buffer.concat(chunks).toString("utf8").replace(/=\r?\n/g, "").replace(/=3D/g, "="),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const address = server.server.address();
    return new MailServer(server, typeof address === "object" && address ? address.port : 0, received);
  }

  /** Settings that point a Mediabox server at this SMTP server. */
  env(): Record<string, string> {
    return { MEDIABOX_SMTP_HOST: "127.0.0.1", MEDIABOX_SMTP_PORT: String(this.port), MEDIABOX_SMTP_TLS: "none", MEDIABOX_SMTP_FROM: "Mediabox <mediabox@test.local>" };
  }

  /** Waits for the `nth` (1-based) mail to `to` whose text matches `pattern`; returns it. */
  async waitForMail(to: string, pattern: RegExp, nth = 1): Promise<ReceivedMail> {
    return waitFor(
      () => this.received.filter((m) => m.to.includes(to) && pattern.test(m.raw))[nth - 1],
      { what: `mail ${nth} to ${to} matching ${pattern}`, timeoutMs: 30_000 },
    );
  }

  /** The token of the first link in a mail (…?token=…). */
  static token(mail: ReceivedMail): string {
    const match = /\?token=([A-Za-z0-9_%-]+)/.exec(mail.raw);
    if (!match) throw new Error(`no link with a token in the mail:\n${mail.raw}`);
    return decodeURIComponent(match[1]!);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
