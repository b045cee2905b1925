/**
 * Outgoing mail (verification, password reset, invitations, support copies) through the site's
 * SMTP server with nodemailer. Without an SMTP host nothing is sent: the mail, link included, is
 * logged at warn level for the admin to pass on (and the CLI prints the links it makes).
 * Requests never wait for SMTP: a mail is handed over in the background, so a slow relay does
 * not slow sign-in pages and the time of an answer does not tell whether a mail was sent.
 */
import type { Transporter } from "nodemailer";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** The link the mail carries, logged when there is no SMTP server. */
  link?: string;
  /** What kind of mail, for the logs (never the token). */
  kind: string;
}

export class Mailer {
  /** Made on the first mail: importing nodemailer takes ~0.1 s, which every start paid, mail or not. */
  private transport: Promise<Transporter> | null = null;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly config: Pick<Config, "smtpHost" | "smtpPort" | "smtpUser" | "smtpPassword" | "smtpFrom" | "smtpTls">,
    private readonly log: Logger,
  ) {}

  get configured(): boolean {
    return Boolean(this.config.smtpHost);
  }

  private transporter(): Promise<Transporter> {
    const config = this.config;
    this.transport ??= import("nodemailer").then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        host: config.smtpHost!,
        port: config.smtpPort,
        secure: config.smtpTls === "implicit",
        requireTLS: config.smtpTls === "starttls",
        ignoreTLS: config.smtpTls === "none",
        ...(config.smtpUser ? { auth: { user: config.smtpUser, pass: config.smtpPassword ?? "" } } : {}),
        connectionTimeout: 15_000,
        greetingTimeout: 15_000,
        socketTimeout: 30_000,
      }),
    );
    return this.transport;
  }

  /** Sends and waits (the CLI). Throws when the SMTP server refuses. */
  async send(mail: Mail): Promise<void> {
    if (!this.configured) {
      this.log.warn("mail not sent: no SMTP server is configured (MEDIABOX_SMTP_HOST); pass the link on by hand", {
        kind: mail.kind, to: mail.to, subject: mail.subject, link: mail.link ?? null,
      });
      return;
    }
    await (await this.transporter()).sendMail({ from: this.config.smtpFrom, to: mail.to, subject: mail.subject, text: mail.text });
    this.log.info("mail sent", { kind: mail.kind, to: mail.to });
  }

  /**
   * Sends without making the caller wait; failures are logged; `onSent` runs after a delivery
   * (awaited when it returns a promise, so stop() waits for it too).
   */
  sendLater(mail: Mail, onSent?: () => unknown): void {
    const sending = this.send(mail).then(
      () => Promise.resolve(onSent?.()).then(
        () => {},
        (err) => this.log.warn("mail sent, but recording it failed", { kind: mail.kind, err: String(err) }),
      ),
      (err) => this.log.error("mail could not be sent", { kind: mail.kind, to: mail.to, err: String(err) }),
    );
    this.pending.add(sending);
    sending.finally(() => this.pending.delete(sending));
  }

  /** Waits for mails in flight (server stop). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    if (this.transport) (await this.transport.catch(() => null))?.close();
  }
}
