/**
 * Mail accounts: IMAP accounts whose messages' attachments are stored (filters by sender, subject
 * and attachment type), polled on a schedule or now, with what each poll took or skipped and why.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

type Account = { id: string; name: string; host: string; port: number; tls: string; username: string; mailbox: string; after_action: string; move_to: string | null; from_contains: string | null; subject_contains: string | null; attachment_types: string[]; enabled: boolean; last_polled_at: string | null; last_error: string | null; messages: { done: number; skipped: number; failed: number } };
type Message = { uid: number; subject: string | null; sender: string | null; status: string; error: string | null; parts: { filename: string; file_id: string; status: string; error: string | null }[] };

const EMPTY = { name: "", host: "", port: "", tls: "implicit", username: "", password: "", mailbox: "INBOX", after_action: "flag", move_to: "", from_contains: "", subject_contains: "", attachment_types: "pdf", ingest_body: false };

export function AutomationMail() {
  const [accounts, setAccounts] = useState<Account[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [form, setForm] = useState({ ...EMPTY });
  const [problem, setProblem] = useState<string | null>(null);
  const load = () => api("/mail-accounts").then((r) => setAccounts(r.items), (err) => setProblem(err.message));
  useEffect(() => void load(), []);
  useEffect(() => {
    if (!open) return;
    const show = () => api(`/mail-accounts/${open}/messages?limit=50`).then((r) => setMessages(r.items), () => {});
    void show();
    const timer = setInterval(() => (show(), load()), 3000);
    return () => clearInterval(timer);
  }, [open]);
  const set = (field: keyof typeof EMPTY) => (e: Event) => {
    const target = e.target as HTMLInputElement;
    setForm({ ...form, [field]: target.type === "checkbox" ? target.checked : target.value });
  };
  async function create(event: Event) {
    event.preventDefault();
    setProblem(null);
    const body: Record<string, unknown> = {
      name: form.name, host: form.host, tls: form.tls, username: form.username, password: form.password, mailbox: form.mailbox, after_action: form.after_action,
      from_contains: form.from_contains || null, subject_contains: form.subject_contains || null, ingest_body: form.ingest_body,
      attachment_types: form.attachment_types.split(",").map((s) => s.trim()).filter(Boolean),
    };
    if (form.port) body.port = Number(form.port);
    if (form.after_action === "move") body.move_to = form.move_to;
    try {
      await api("/mail-accounts", { method: "POST", body });
      setForm({ ...EMPTY });
      load();
    } catch (err) {
      setProblem(errorText(err));
    }
  }
  const field = (label: string, name: keyof typeof EMPTY, type = "text") => (
    <label>
      {label}
      <input type={type} value={form[name] as string} onInput={set(name)} />
    </label>
  );
  return (
    <div class="split">
      <div>
        <h2>Mail accounts</h2>
        <table class="plain">
          <thead>
            <tr><th>Account</th><th>Last poll</th><th>Taken</th><th>Skipped</th><th>Failed</th><th><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {accounts.map((a) => (
              <tr key={a.id} class={open === a.id ? "current" : ""}>
                <td>
                  <button type="button" class="link" onClick={() => setOpen(a.id)}>{a.name}</button> <span class="hint">{a.username}@{a.host}</span>
                  {a.last_error ? <div class="error">{a.last_error}</div> : null}
                </td>
                <td>{a.last_polled_at ? new Date(a.last_polled_at).toLocaleString() : "never"}</td>
                <td>{a.messages.done}</td>
                <td>{a.messages.skipped}</td>
                <td>{a.messages.failed}</td>
                <td>
                  <button type="button" class="link" onClick={() => api(`/mail-accounts/${a.id}/poll`, { method: "POST" }).then(() => setOpen(a.id), (err) => setProblem(err.message))}>poll now</button>{" "}
                  <button type="button" class="link" onClick={async () => { if (confirm(`Remove the mail account ${a.name}?`)) { await api(`/mail-accounts/${a.id}`, { method: "DELETE" }).catch((err) => setProblem(err.message)); load(); } }}>remove</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {open ? (
          <>
            <h3>Messages</h3>
            <ul class="plain">
              {messages.map((m) => (
                <li key={m.uid}>
                  <strong>{m.subject ?? "(no subject)"}</strong> <span class="hint">{m.sender} — {m.status}{m.error ? `: ${m.error}` : ""}</span>
                  <ul>
                    {m.parts.map((p) => (
                      <li key={p.file_id}>{p.status === "stored" ? <a href={`#/files/${p.file_id}`}>{p.filename}</a> : p.filename} <span class="hint">{p.status}{p.error ? `: ${p.error}` : ""}</span></li>
                    ))}
                  </ul>
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </div>
      <form onSubmit={create} class="editor">
        <h2>Add an account</h2>
        {field("Name", "name")}
        {field("IMAP server", "host")}
        {field("Port (default 993, or 143 without implicit TLS)", "port", "number")}
        <label>
          TLS
          <select value={form.tls} onChange={set("tls")}>
            <option value="implicit">implicit (993)</option>
            <option value="starttls">STARTTLS (required)</option>
            <option value="none">none (local servers only)</option>
          </select>
        </label>
        {field("User name", "username")}
        {field("Password", "password", "password")}
        {field("Mailbox", "mailbox")}
        <label>
          After a message is stored
          <select value={form.after_action} onChange={set("after_action")}>
            <option value="flag">flag it (seen and flagged)</option>
            <option value="move">move it</option>
          </select>
        </label>
        {form.after_action === "move" ? field("Move to mailbox", "move_to") : null}
        {field("Sender contains", "from_contains")}
        {field("Subject contains", "subject_contains")}
        {field("Attachment types (comma list: pdf, image/*)", "attachment_types")}
        <label class="inline">
          <input type="checkbox" checked={form.ingest_body} onChange={set("ingest_body")} /> Also store the message itself as a document
        </label>
        <p class="error" role="alert">{problem ?? ""}</p>
        <button type="submit">Add account</button>
      </form>
    </div>
  );
}
