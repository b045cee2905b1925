/**
 * "Send to drive": library files exported to a connected cloud drive (POST
 * /cloud-storage/export). The user picks a connection, walks its folders to the destination,
 * optionally names a new folder inside it, and follows the export job until it ends; the
 * outcome goes to `onDone` (the library's notice, or the file page's status line).
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

type Connection = { id: string; provider: string; provider_email: string | null; display_name: string | null; is_token_expired: boolean };
type Listing = { files: { id: string; name: string; is_folder: boolean }[]; current_folder_id: string | null; breadcrumbs: { id: string; name: string }[] };

const FINISHED = ["completed", "failed", "partial", "cancelled"];
const driveName = (c: Connection) => `${c.display_name ?? c.provider_email ?? c.provider} (${c.provider === "google_drive" ? "Google Drive" : c.provider === "nextcloud" ? "Nextcloud" : c.provider})`;

export function SendToDrive({ fileIds, onDone, onCancel }: { fileIds: string[]; onDone: (message: string) => void; onCancel: () => void }) {
  const [connections, setConnections] = useState<Connection[] | null>(null);
  const [connectionId, setConnectionId] = useState("");
  const [listing, setListing] = useState<Listing | null>(null);
  const [folderName, setFolderName] = useState("");
  const [job, setJob] = useState<any>(null);
  const [error, setError] = useState<string | null>(null);
  const fail = (err: unknown) => setError(errorText(err));

  useEffect(() => {
    api("/cloud-storage/connections").then((r) => {
      setConnections(r.items);
      if (r.items.length) setConnectionId(r.items[0].id);
    }, fail);
  }, []);
  const open = (folder: string | null) => {
    setError(null);
    return api(`/cloud-storage/connections/${connectionId}/browse?page_size=200${folder ? `&folder_id=${encodeURIComponent(folder)}` : ""}`).then(setListing, fail);
  };
  useEffect(() => {
    setListing(null);
    if (connectionId) open(null);
  }, [connectionId]);
  // The export job is followed until it ends; its outcome is the user's answer.
  useEffect(() => {
    if (!job) return;
    if (FINISHED.includes(job.status)) {
      const where = [connections?.find((c) => c.id === connectionId)?.provider_email, ...(listing?.breadcrumbs.map((b) => b.name) ?? []), folderName.trim()].filter(Boolean).join(" / ");
      const failed = (job.files ?? []).filter((f: any) => f.status === "failed");
      onDone(
        job.status === "completed"
          ? `Sent ${job.completed_files} file(s) to ${where}`
          : `Sending to the drive ${job.status}: ${job.completed_files} of ${job.total_files} sent${failed.length ? `; ${failed.map((f: any) => `${f.name}: ${f.error}`).join("; ")}` : ""}${job.error ? ` (${job.error})` : ""}`,
      );
      return;
    }
    const timer = setTimeout(() => api(`/cloud-storage/jobs/${job.job_id}`).then((r) => setJob(r.job), fail), 1000);
    return () => clearTimeout(timer);
  }, [job]);

  async function send(event: Event) {
    event.preventDefault();
    setError(null);
    try {
      const folder = listing?.current_folder_id ?? null;
      const started = await api("/cloud-storage/export", {
        method: "POST",
        body: { connection_id: connectionId, image_ids: fileIds, ...(folder ? { folder_id: folder } : {}), ...(folderName.trim() ? { folder_name: folderName.trim() } : {}) },
      });
      // A small export is written before the answer: the job's own view says how it went.
      setJob((await api(`/cloud-storage/jobs/${started.job_id}`)).job);
    } catch (err) {
      fail(err);
    }
  }

  if (connections === null) return <p aria-live="polite">Loading drives…</p>;
  if (!connections.length) {
    return (
      <div class="send-to-drive">
        <p>
          No drive is connected. <a href="#/cloud">Connect one on the Cloud drives page</a>.
        </p>
        <button type="button" class="link" onClick={onCancel}>Close</button>
      </div>
    );
  }
  const busy = job !== null && !FINISHED.includes(job.status);
  return (
    <form class="send-to-drive" onSubmit={send} aria-label="Send to drive">
      <label>
        Drive
        <select value={connectionId} onChange={(e) => setConnectionId((e.target as HTMLSelectElement).value)} disabled={busy}>
          {connections.map((c) => (
            <option key={c.id} value={c.id}>
              {driveName(c)}
              {c.is_token_expired ? " — expired, connect again" : ""}
            </option>
          ))}
        </select>
      </label>
      <fieldset class="folder-pick">
        <legend>Destination folder</legend>
        {listing ? (
          <>
            <nav aria-label="Destination path" class="crumbs">
              {listing.breadcrumbs.map((b, i) => (
                <span key={b.id}>
                  {i ? " / " : ""}
                  {i === listing.breadcrumbs.length - 1 ? (
                    <strong aria-current="location">{b.name}</strong>
                  ) : (
                    <button type="button" class="link" onClick={() => open(b.id)}>{b.name}</button>
                  )}
                </span>
              ))}
            </nav>
            <ul class="entries">
              {listing.files.filter((f) => f.is_folder).map((f) => (
                <li key={f.id}>
                  <button type="button" class="link" onClick={() => open(f.id)} aria-label={`Open folder ${f.name}`}>
                    📁 {f.name}
                  </button>
                </li>
              ))}
            </ul>
          </>
        ) : (
          <p aria-live="polite">Loading folders…</p>
        )}
        <label>
          New folder inside it <span class="hint">(optional)</span>
          <input value={folderName} maxLength={255} onInput={(e) => setFolderName((e.target as HTMLInputElement).value)} />
        </label>
      </fieldset>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <p class="row">
        <button type="submit" disabled={!listing || busy}>
          {busy ? "Sending…" : `Send ${fileIds.length} file${fileIds.length === 1 ? "" : "s"} here`}
        </button>
        <button type="button" class="link" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </p>
      {job ? (
        <p role="status">
          <progress max={job.total_files || 1} value={job.completed_files ?? 0} aria-label="Files sent" /> {job.completed_files ?? 0} of {job.total_files} sent ({job.status})
        </p>
      ) : null}
    </form>
  );
}
