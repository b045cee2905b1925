/**
 * Members (owners and admins): who belongs to the organization with which role; invite by email
 * (without a mail server the page shows the link to pass on, since nothing was sent), the pending
 * invitations with Revoke, change a role, remove.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

type Invitation = { email: string; role: string; invited_at: string; expires_at: string };
type Member = { id: string; email: string; name: string | null; email_verified: boolean; role: string };
const ROLES = ["owner", "admin", "member", "viewer"] as const;

export function Members({ me }: { me: string }) {
  const [members, setMembers] = useState<Member[]>([]);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("member");
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [link, setLink] = useState<{ email: string; url: string; copied: boolean } | null>(null);
  const load = () => {
    api("/account/members").then((r) => setMembers(r.items), (err) => setError(errorText(err)));
    api("/account/invitations").then((r) => setInvitations(r.items), () => setInvitations([]));
  };
  useEffect(() => void load(), []);
  async function act(action: () => Promise<unknown>, done: string) {
    setError(null);
    try {
      await action();
      if (done) setNotice(done);
      load();
    } catch (err) {
      setError(errorText(err));
    }
  }
  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title" tabIndex={-1}>Members</h1>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {notice ? <p class="notice" role="status">{notice}</p> : null}
      <form
        class="new-key"
        onSubmit={(e) => {
          e.preventDefault();
          const to = email.trim();
          setLink(null);
          act(async () => {
            const answer = await api("/account/invitations", { method: "POST", body: { email: to, role } });
            if (answer.invite_url) setLink({ email: to, url: answer.invite_url, copied: false });
            setNotice(answer.mailed ? `Invitation mailed to ${to}` : null);
          }, "").then(() => setEmail(""));
        }}
      >
        <label>
          Invite by email
          <input type="email" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>{r}</option>
            ))}
          </select>
        </label>
        <button type="submit">Invite</button>
      </form>
      {link ? (
        <div class="notice invite-link" role="status">
          <p>
            No mail server is set up (MEDIABOX_SMTP_HOST), so nothing was sent. Give {link.email} this invitation link (valid 7 days):
          </p>
          <p class="row wrap">
            <code class="secret" aria-label="Invitation link">{link.url}</code>
            <button type="button" onClick={() => navigator.clipboard.writeText(link.url).then(() => setLink({ ...link, copied: true }), () => null)}>
              {link.copied ? "Copied" : "Copy link"}
            </button>
          </p>
        </div>
      ) : null}
      {invitations.length ? (
        <>
          <h2>Pending invitations</h2>
          <table class="invitations">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                <th scope="col"><span class="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.email}>
                  <td>{i.email}</td>
                  <td>{i.role}</td>
                  <td>{new Date(i.expires_at).toLocaleDateString()}</td>
                  <td>
                    <button type="button" class="danger" onClick={() => act(() => api(`/account/invitations/${encodeURIComponent(i.email)}`, { method: "DELETE" }), `Invitation of ${i.email} revoked`)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Members</h2>
        </>
      ) : null}
      <table>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.id}>
              <td>{m.email}{m.email_verified ? "" : " (not verified)"}</td>
              <td>{m.name ?? "—"}</td>
              <td>
                <label class="inline">
                  <span class="visually-hidden">Role of {m.email}</span>
                  <select value={m.role} disabled={m.email === me} onChange={(e) => act(() => api(`/account/members/${m.id}`, { method: "PATCH", body: { role: (e.target as HTMLSelectElement).value } }), `${m.email} is now ${(e.target as HTMLSelectElement).value}`)}>
                    {ROLES.map((r) => (
                      <option key={r} value={r}>{r}</option>
                    ))}
                  </select>
                </label>
              </td>
              <td>
                {m.email === me ? "you" : (
                  <button type="button" class="danger" onClick={() => confirm(`Remove ${m.email} from the organization?`) && act(() => api(`/account/members/${m.id}`, { method: "DELETE" }), `${m.email} removed`)}>
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
