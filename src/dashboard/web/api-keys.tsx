/** The API Keys tab: the organization's keys with their permissions and last use; a new key shown once; revoke. */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

type Key = { id: string; name: string | null; display_prefix: string; permissions: string[]; created_at: string; last_used_at: string | null; revoked_at: string | null };
const PERMISSIONS = ["view", "edit", "delete"] as const;

export function ApiKeys() {
  const [keys, setKeys] = useState<Key[]>([]);
  const [name, setName] = useState("");
  const [permissions, setPermissions] = useState<Set<string>>(new Set(PERMISSIONS));
  const [created, setCreated] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const load = () => api("/account/api-keys").then((r) => setKeys(r.items), (err) => setError(errorText(err)));
  useEffect(() => void load(), []);

  async function create(event: Event) {
    event.preventDefault();
    setError(null);
    try {
      const answer = await api("/account/api-keys", { method: "POST", body: { ...(name.trim() ? { name: name.trim() } : {}), permissions: PERMISSIONS.filter((p) => permissions.has(p)) } });
      setCreated(answer.key);
      setCopied(false);
      setName("");
      load();
    } catch (err) {
      setError(errorText(err));
    }
  }
  async function revoke(key: Key) {
    if (!confirm(`Revoke ${key.name ?? key.display_prefix}? Programs using it stop working at once.`)) return;
    await api(`/account/api-keys/${key.id}`, { method: "DELETE" }).catch((err) => setError(err.message));
    load();
  }
  const toggle = (p: string) => setPermissions((current) => {
    const next = new Set(current);
    if (next.has(p)) next.delete(p);
    else next.add(p);
    return next;
  });

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title" tabIndex={-1}>API keys</h1>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {created ? (
        <div class="notice" role="status">
          <p>Your new key. Copy it now: it is not shown again.</p>
          <p class="row">
            <code class="secret" aria-label="New API key">{created}</code>
            <button
              type="button"
              onClick={async () => {
                await navigator.clipboard.writeText(created).then(() => setCopied(true), () => setCopied(false));
              }}
            >
              {copied ? "Copied" : "Copy"}
            </button>
          </p>
        </div>
      ) : null}
      <form class="new-key" onSubmit={create}>
        <label>
          Name
          <input value={name} maxLength={100} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="e.g. nightly import" />
        </label>
        <fieldset>
          <legend>Permissions</legend>
          {PERMISSIONS.map((p) => (
            <label key={p} class="inline">
              <input type="checkbox" checked={permissions.has(p)} onChange={() => toggle(p)} /> {p}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={permissions.size === 0}>Create key</button>
      </form>
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Permissions</th>
            <th scope="col">Last used</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} class={key.revoked_at ? "revoked" : ""}>
              <td>{key.name ?? "—"}</td>
              <td><code>{key.display_prefix}…</code></td>
              <td>{key.permissions.join(", ")}</td>
              <td>{key.last_used_at ? new Date(key.last_used_at).toLocaleString() : "never"}</td>
              <td>{key.revoked_at ? "revoked" : <button type="button" class="danger" onClick={() => revoke(key)}>Revoke</button>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
