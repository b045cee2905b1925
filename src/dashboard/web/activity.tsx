/** Activity: recent upload sessions with their progress, files stuck in processing, and this month's quota. */
import { useEffect, useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";

export function Activity() {
  const [sessions, setSessions] = useState<any[]>([]);
  const [stuck, setStuck] = useState<any[]>([]);
  const [quota, setQuota] = useState<any>(null);
  const [error, setError] = useState<string | null>(null);
  async function load() {
    try {
      const [s, k, q] = await Promise.all([api("/files/sessions?limit=20"), api("/files/sessions/stuck?stuck_minutes=30"), api("/files/quota-check?file_count=1")]);
      setSessions(s.items);
      setStuck(k.images ?? []);
      setQuota(q);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  }
  useEffect(() => {
    load();
    const timer = setInterval(load, 5000);
    return () => clearInterval(timer);
  }, []);
  async function cancel(id: string) {
    await api(`/files/sessions/${id}/cancel`, { method: "POST" }).catch((err) => setError(err.message));
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
    </section>
  );
}
