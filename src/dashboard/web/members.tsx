/** Members (owners and admins): who belongs to the organization with which role; invite by email, change a role, remove. */
import { useEffect, useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";

type Member = { id: string; email: string; name: string | null; email_verified: boolean; role: string };
const ROLES = ["owner", "admin", "member", "viewer"] as const;

export function Members({ me }: { me: string }) {
  const [members, setMembers] = useState<Member[]>([]);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("member");
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => api("/account/members").then((r) => setMembers(r.items), (err) => setError(err instanceof ApiFailure ? err.message : String(err)));
  useEffect(() => void load(), []);
  async function act(action: () => Promise<unknown>, done: string) {
    setError(null);
    try {
      await action();
      setNotice(done);
      load();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
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
          act(() => api("/account/invitations", { method: "POST", body: { email: email.trim(), role } }), `Invitation sent to ${email.trim()}`).then(() => setEmail(""));
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
