/**
 * The Activity page's job monitor: the organization's background jobs (GET /jobs, extension),
 * newest first, filtered by status, paged, refreshed while open; a running or waiting job can be
 * cancelled (POST /job/{id}/cancel).
 */
import { useState } from "preact/hooks";
import { api, errorText } from "./api.ts";
import { JOB_LABELS } from "./job-labels.ts";
import { usePolling } from "./polling.ts";

const PAGE = 25;
const STATUSES = ["pending", "processing", "failed", "completed", "cancelled"];


interface ListedJob {
  job_id: string;
  type: string;
  status: string;
  progress: number;
  error: string | null;
  attempts: number;
  max_attempts: number;
  created_at: string;
  file_id: string | null;
}

export function JobsMonitor() {
  const [status, setStatus] = useState("");
  const [offset, setOffset] = useState(0);
  const [jobs, setJobs] = useState<ListedJob[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);

  async function load() {
    const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
    if (status) query.set("status", status);
    try {
      const page = await api<{ items: ListedJob[]; total_count: number }>(`/jobs?${query}`);
      setJobs(page.items);
      setTotal(page.total_count);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  }
  usePolling(load, 5000, [status, offset]);

  async function cancel(job: ListedJob) {
    try {
      await api(`/job/${job.job_id}/cancel`, { method: "POST" });
    } catch (err) {
      setError(errorText(err));
    }
    load();
  }

  return (
    <section aria-labelledby="jobs-title" class="jobs-monitor">
      <h2 id="jobs-title">Background jobs</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={status} onChange={(e) => (setStatus((e.target as HTMLSelectElement).value), setOffset(0))}>
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <p class="count" aria-live="polite">
        {total} job{total === 1 ? "" : "s"}
        {total > PAGE ? ` (${offset + 1}–${Math.min(offset + PAGE, total)})` : ""}
      </p>
      {jobs.length ? (
        <table class="jobs">
          <thead>
            <tr>
              <th scope="col">Queued</th>
              <th scope="col">Job</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col">File</th>
              <th scope="col">Error</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((job) => (
              <tr key={job.job_id}>
                <td>{new Date(job.created_at).toLocaleString()}</td>
                <td title={job.type}>{JOB_LABELS[job.type] ?? job.type}</td>
                <td>
                  {job.status}
                  {job.attempts > 1 ? <span class="hint"> (attempt {job.attempts} of {job.max_attempts})</span> : null}
                </td>
                <td>
                  <progress max={100} value={job.progress} aria-label={`Job progress ${Math.round(job.progress)} %`} /> {Math.round(job.progress)} %
                </td>
                <td>{job.file_id ? <a href={`#/files/${job.file_id}`}>Open file</a> : null}</td>
                <td class="why">{job.error ?? ""}</td>
                <td>
                  {job.status === "pending" || job.status === "processing" ? (
                    <button type="button" onClick={() => cancel(job)} aria-label={`Cancel job ${JOB_LABELS[job.type] ?? job.type} queued ${new Date(job.created_at).toLocaleString()}`}>
                      Cancel
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No {status ? `${status} ` : ""}jobs in the last 14 days.</p>
      )}
      {total > PAGE ? (
        <p class="pager">
          <button type="button" class="link" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Newer
          </button>{" "}
          <button type="button" class="link" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
            Older
          </button>
        </p>
      ) : null}
    </section>
  );
}
