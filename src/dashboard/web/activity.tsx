/**
 * Activity: recent upload sessions with their progress (cancel), files whose processing failed
 * (retry: POST /files/{id}/reprocess), files stuck in processing, the background jobs
 * (jobs-monitor.tsx) and this month's quota.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";
import { JobsMonitor } from "./jobs-monitor.tsx";
import { usePolling } from "./polling.ts";

export function Activity() {
  const [sessions, setSessions] = useState<any[]>([]);
  const [stuck, setStuck] = useState<any[]>([]);
  const [failed, setFailed] = useState<any[]>([]);
  const [retried, setRetried] = useState<string | null>(null);
  const retriedRef = useRef<HTMLParagraphElement>(null);
  // The retried row leaves the table (its file is no longer failed): focus goes to what happened.
  useEffect(() => {
    if (retried) retriedRef.current?.focus();
  }, [retried]);
  const [quota, setQuota] = useState<any>(null);
  const [error, setError] = useState<string | null>(null);
  async function load() {
    try {
      const [s, k, q, f] = await Promise.all([
        api("/files/sessions?limit=20"),
        api("/files/sessions/stuck?stuck_minutes=30"),
        api("/files/quota-check?file_count=1"),
        api("/files?processing_status=failed&limit=50&sort_by=created_at&sort_order=desc&visible_text_chars=0"),
      ]);
      setSessions(s.items);
      setFailed(f.items);
      setStuck(k.images ?? []);
      setQuota(q);
    } catch (err) {
      setError(errorText(err));
    }
  }
  usePolling(load, 5000, []);
  async function cancel(id: string) {
    await api(`/files/sessions/${id}/cancel`, { method: "POST" }).catch((err) => setError(err.message));
    load();
  }
  async function retry(file: any) {
    setError(null);
    try {
      await api(`/files/${file.id}/reprocess`, { method: "POST" });
      setRetried(`${file.title ?? file.filename} is queued again`);
    } catch (err) {
      setError(errorText(err));
    }
    load();
  }
  return (
    <section aria-labelledby="activity-title">
      <h1 id="activity-title" tabIndex={-1}>Activity</h1>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {quota ? (
        <p class="quota">
          AI descriptions this month: {quota.current_usage} used{quota.monthly_limit >= 0 ? ` of ${quota.monthly_limit}` : " (unlimited)"}; batches up to{" "}
          {quota.max_batch_size >= 0 ? quota.max_batch_size : "any number of"} files.
        </p>
      ) : null}
      <h2>Upload sessions</h2>
      {sessions.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Status</th>
              <th scope="col">Files</th>
              <th scope="col">Progress</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.session_id}>
                <td>{new Date(s.created_at).toLocaleString()}</td>
                <td>{s.status}</td>
                <td>{s.total_files}</td>
                <td>
                  <progress max={100} value={s.progress_percentage ?? 0} aria-label={`Session progress ${s.progress_percentage ?? 0} %`} /> {Math.round(s.progress_percentage ?? 0)} %
                </td>
                <td>{["pending", "uploading", "processing"].includes(s.status) ? <button type="button" onClick={() => cancel(s.session_id)}>Cancel</button> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No upload sessions yet (batch uploads create them).</p>
      )}
      <h2>Failed files</h2>
      {retried ? <p class="notice" role="status" tabIndex={-1} ref={retriedRef}>{retried}</p> : null}
      {failed.length ? (
        <table class="failed-files">
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Type</th>
              <th scope="col">Why</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {failed.map((f) => (
              <tr key={f.id}>
                <td><a href={`#/files/${f.id}`}>{f.title ?? f.filename}</a></td>
                <td>{f.media_type}</td>
                <td class="why">{f.processing_error ?? "unknown"}</td>
                <td>
                  <button type="button" onClick={() => retry(f)} aria-label={`Retry ${f.title ?? f.filename}`}>
                    Retry
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>None: every file's processing ended well.</p>
      )}
      <h2>Stuck files</h2>
      {stuck.length ? (
        <ul>
          {stuck.map((f) => (
            <li key={f.image_id}>
              <a href={`#/files/${f.image_id}`}>{f.image_id}</a> — {f.unified_status}
            </li>
          ))}
        </ul>
      ) : (
        <p>None: nothing has waited more than 30 minutes.</p>
      )}
      <JobsMonitor />
    </section>
  );
}
