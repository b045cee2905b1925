/**
 * Cloud drives: connect one (its sign-in opens in a popup; the appliance's callback page tells
 * this page with an `oauth-complete` message from this origin), browse a connection's folders,
 * import the chosen files (a job whose progress is shown), disconnect.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";
import { formatBytes } from "../../byte-sizes.ts";

type Connection = { id: string; provider: string; provider_email: string | null; display_name: string | null; is_token_expired: boolean };
type Entry = { id: string; name: string; mime_type: string; size_bytes: number | null; is_folder: boolean; is_importable: boolean };
type Listing = { files: Entry[]; next_page_token: string | null; current_folder_id: string | null; breadcrumbs: { id: string; name: string }[] };

const PROVIDER_NAMES: Record<string, string> = { google_drive: "Google Drive", nextcloud: "Nextcloud" };
/** The setting that makes each provider connectable, named when none is. */
const PROVIDER_SETTINGS: Record<string, string> = { google_drive: "MEDIABOX_GOOGLE_DRIVE_CLIENT_ID and _SECRET", nextcloud: "MEDIABOX_NEXTCLOUD_URL, _CLIENT_ID and _CLIENT_SECRET" };

function Browser({ connection }: { connection: Connection }) {
  const [listing, setListing] = useState<Listing | null>(null);
  const [chosen, setChosen] = useState<Map<string, Entry>>(new Map());
  const [job, setJob] = useState<any>(null);
  const [error, setError] = useState<string | null>(null);
  const open = (folder: string | null) =>
    api(`/cloud-storage/connections/${connection.id}/browse${folder ? `?folder_id=${encodeURIComponent(folder)}` : ""}`).then(setListing, (err) => setError(errorText(err)));
  useEffect(() => void open(null), [connection.id]);
  useEffect(() => {
    if (!job || ["completed", "failed", "partial", "cancelled"].includes(job.status)) return;
    const timer = setTimeout(() => api(`/cloud-storage/jobs/${job.job_id ?? job.id}`).then((r) => setJob({ ...r.job, job_id: job.job_id ?? job.id }), () => null), 1000);
    return () => clearTimeout(timer);
  }, [job]);
  async function importChosen() {
    setError(null);
    try {
      const files = [...chosen.values()].map((f) => ({ id: f.id, name: f.name, mime_type: f.mime_type, ...(f.size_bytes !== null ? { size_bytes: f.size_bytes } : {}) }));
      const started = await api("/cloud-storage/import", { method: "POST", body: { connection_id: connection.id, files } });
      setJob({ job_id: started.job_id, status: started.status, total_files: started.total_files });
      setChosen(new Map());
    } catch (err) {
      setError(errorText(err));
    }
  }
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!listing) return <p aria-live="polite">Loading…</p>;
  return (
    <div class="cloud-browser">
      <nav aria-label="Folder path" class="crumbs">
        {listing.breadcrumbs.map((b, i) => (
          <span key={b.id}>
            {i ? " / " : ""}
            <button type="button" class="link" onClick={() => open(b.id)}>{b.name}</button>
          </span>
        ))}
      </nav>
      <ul class="entries">
        {listing.files.map((f) => (
          <li key={f.id}>
            {f.is_folder ? (
              <button type="button" class="link" onClick={() => open(f.id)}>📁 {f.name}</button>
            ) : (
              <label class="inline">
                <input
                  type="checkbox"
                  disabled={!f.is_importable}
                  checked={chosen.has(f.id)}
                  onChange={() => setChosen((c) => { const next = new Map(c); if (next.has(f.id)) next.delete(f.id); else next.set(f.id, f); return next; })}
                />
                {f.name} {f.size_bytes !== null ? <span class="hint">({formatBytes(f.size_bytes)})</span> : null}
              </label>
            )}
          </li>
        ))}
      </ul>
      <button type="button" disabled={chosen.size === 0} onClick={importChosen}>
        Import {chosen.size || ""} file{chosen.size === 1 ? "" : "s"}
      </button>
      {job ? (
        <p role="status">
          Import {job.status}
          {job.progress_percentage !== undefined ? ` (${Math.round(job.progress_percentage)} %)` : ""}
          {job.files?.length ? `: ${job.files.filter((f: any) => f.status === "completed").length} of ${job.files.length} stored` : ""}
        </p>
      ) : null}
    </div>
  );
}

export function Cloud() {
  const [connections, setConnections] = useState<Connection[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [providers, setProviders] = useState<{ name: string; configured: boolean }[] | null>(null);
  const load = () => api("/cloud-storage/connections").then((r) => setConnections(r.items), (err) => setError(errorText(err)));
  useEffect(() => {
    load();
    api("/cloud-storage/providers").then((r) => setProviders(r.items), () => setProviders([]));
    // The popup's callback page posts here, from this appliance's origin only.
    const listen = (event: MessageEvent) => {
      if (event.origin !== location.origin || event.data?.type !== "oauth-complete") return;
      if (event.data.success) setMessage(`Connected ${event.data.connection?.provider_email ?? event.data.connection?.provider}`);
      else setError(`The drive was not connected: ${event.data.error ?? "unknown reason"}`);
      load();
    };
    addEventListener("message", listen);
    return () => removeEventListener("message", listen);
  }, []);
  async function connect(provider: string) {
    setError(null);
    setMessage(null);
    // Opened before the request, so the browser counts it as the click's own popup.
    const popup = openPopup();
    try {
      const started = await api(`/cloud-storage/auth/${provider}`, { method: "POST" });
      if (popup) popup.location.href = started.authorization_url;
      else location.assign(started.authorization_url);
    } catch (err) {
      popup?.close();
      setError(errorText(err));
    }
  }
  async function disconnect(connection: Connection) {
    if (!confirm(`Disconnect ${connection.provider_email ?? connection.provider}?`)) return;
    await api(`/cloud-storage/connections/${connection.id}`, { method: "DELETE" }).catch((err) => setError(err.message));
    load();
  }
  return (
    <section aria-labelledby="cloud-title">
      <h1 id="cloud-title" tabIndex={-1}>Cloud drives</h1>
      {message ? <p class="notice" role="status">{message}</p> : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      {providers ? (
        providers.some((p) => p.configured) ? (
          <p class="row wrap">
            {providers.filter((p) => p.configured).map((p) => (
              <button key={p.name} type="button" onClick={() => connect(p.name)}>
                Connect {PROVIDER_NAMES[p.name] ?? p.name}
              </button>
            ))}
          </p>
        ) : (
          <p class="hint">
            No cloud drive is set up on this appliance. The administrator connects one with{" "}
            {providers.map((p, i) => (
              <span key={p.name}>
                {i ? " or " : ""}
                <code>{PROVIDER_SETTINGS[p.name] ?? p.name}</code> ({PROVIDER_NAMES[p.name] ?? p.name})
              </span>
            ))}
            ; see the README's Cloud storage section.
          </p>
        )
      ) : null}
      <ul class="connections">
        {connections.map((c) => (
          <li key={c.id}>
            <p class="row">
              <strong>{c.display_name ?? c.provider_email ?? c.provider}</strong> <span class="hint">{c.provider}{c.is_token_expired ? " · expired: connect again" : ""}</span>
              <button type="button" onClick={() => setOpen(open === c.id ? null : c.id)} aria-expanded={open === c.id}>
                {open === c.id ? "Close" : "Browse"}
              </button>
              <button type="button" class="danger" onClick={() => disconnect(c)}>Disconnect</button>
            </p>
            {open === c.id ? <Browser connection={c} /> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

function openPopup(): Window | null {
  return window.open("about:blank", "mediabox-oauth", "width=520,height=680");
}
