/**
 * Rules: the organization's rules in the order they run, each written as JSON (the server's
 * validation message is shown as it comes), saved, switched on and off, tried with a dry run that
 * lists the files it would touch, applied to the library as a job whose progress is followed;
 * and what auto matching (predicted_tags, predicted_folder_id) learned, with a button to learn again.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";
import { usePolling } from "./polling.ts";

type Rule = { id: string; name: string; enabled: boolean; match: string; conditions: unknown[]; actions: unknown[]; position: number; applied_files: number; last_applied_at: string | null; description: string | null };
type DryRun = { matched_count: number; scanned_count: number; files: { id: string; filename: string; title: string | null; media_type: string }[]; has_more: boolean };

const EXAMPLE = JSON.stringify(
  { name: "finance", conditions: [{ field: "text", op: "contains", value: "invoice" }], actions: [{ type: "add_tags", tags: ["finance"] }] },
  null,
  2,
);

export function AutomationRules() {
  const [rules, setRules] = useState<Rule[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [text, setText] = useState(EXAMPLE);
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [dry, setDry] = useState<DryRun | null>(null);
  const [job, setJob] = useState<{ id: string; status: string; progress: number; results: any[] } | null>(null);
  const load = () => api("/rules?limit=200").then((r) => setRules(r.items), (err) => setProblem(err.message));
  useEffect(() => void load(), []);

  // An apply job is followed until it ends.
  useEffect(() => {
    if (!job || ["completed", "failed", "cancelled"].includes(job.status)) return;
    const timer = setTimeout(async () => {
      const j = await api(`/job/${job.id}`).catch(() => null);
      if (j) setJob({ id: j.job_id, status: j.status, progress: j.progress, results: j.results });
      if (j && j.status === "completed") load();
    }, 700);
    return () => clearTimeout(timer);
  }, [job]);

  function edit(rule: Rule | null) {
    setProblem(null);
    setNotice(null);
    setDry(null);
    setEditing(rule?.id ?? null);
    setText(rule ? JSON.stringify({ name: rule.name, description: rule.description, enabled: rule.enabled, match: rule.match, position: rule.position, conditions: rule.conditions, actions: rule.actions }, null, 2) : EXAMPLE);
  }
  function parsed(): any | null {
    try {
      return JSON.parse(text);
    } catch (err) {
      setProblem(`The rule is not valid JSON: ${(err as Error).message}`);
      return null;
    }
  }
  async function save(event: Event) {
    event.preventDefault();
    setProblem(null);
    const body = parsed();
    if (!body) return;
    try {
      const saved = editing ? await api(`/rules/${editing}`, { method: "PATCH", body }) : await api("/rules", { method: "POST", body });
      setEditing(saved.id);
      setNotice(`Saved "${saved.name}"`);
      load();
    } catch (err) {
      setProblem(errorText(err));
    }
  }
  async function dryRun() {
    setProblem(null);
    const body = parsed();
    if (!body) return;
    try {
      setDry(await api("/rules/dry-run", { method: "POST", body: { match: body.match, conditions: body.conditions ?? [], limit: 100 } }));
    } catch (err) {
      setProblem(errorText(err));
    }
  }
  async function apply(rule: Rule) {
    if (!confirm(`Apply "${rule.name}" to every file of the library?`)) return;
    const started = await api(`/rules/${rule.id}/apply`, { method: "POST" }).catch((err) => (setProblem(err.message), null));
    if (started) setJob({ id: started.job_id, status: "pending", progress: 0, results: [] });
  }
  async function toggle(rule: Rule) {
    await api(`/rules/${rule.id}`, { method: "PATCH", body: { enabled: !rule.enabled } }).catch((err) => setProblem(err.message));
    load();
  }
  async function remove(rule: Rule) {
    if (!confirm(`Delete the rule "${rule.name}"? Files keep what it changed.`)) return;
    await api(`/rules/${rule.id}`, { method: "DELETE" }).catch((err) => setProblem(err.message));
    if (editing === rule.id) edit(null);
    load();
  }
  return (
    <div class="split">
      <div>
        <h2>Rules</h2>
        <button type="button" onClick={() => edit(null)}>New rule</button>
        <table class="plain">
          <thead>
            <tr><th>Rule</th><th>On</th><th>Files</th><th><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {rules.map((r) => (
              <tr key={r.id} class={editing === r.id ? "current" : ""}>
                <td><button type="button" class="link" onClick={() => edit(r)}>{r.name}</button></td>
                <td><input type="checkbox" checked={r.enabled} aria-label={`${r.name} enabled`} onChange={() => toggle(r)} /></td>
                <td>{r.applied_files}</td>
                <td>
                  <button type="button" class="link" onClick={() => apply(r)} aria-label={`Apply ${r.name} to the library`}>apply to library</button>{" "}
                  <button type="button" class="link" onClick={() => remove(r)} aria-label={`Delete ${r.name}`}>delete</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {job ? (
          <p role="status">
            Applying: {job.status}, {job.progress}%
            {job.status === "completed" && job.results[0] ? ` — ${job.results[0].applied_files} of ${job.results[0].scanned_files} files changed` : ""}
          </p>
        ) : null}
        <AutoMatching />
      </div>
      <form onSubmit={save} class="editor">
        <label>
          Rule (JSON: name, match, conditions, actions)
          <textarea class="code" rows={16} spellcheck={false} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} aria-describedby="rule-problem" />
        </label>
        <p class="hint">
          Fields: text, filename, title, description, tags, media_type, document_type, category, source (upload, watch, mail, cloud, link), size_bytes, page_count,
          duration_seconds, people_count, people, domain, camera, lens, place, country_code, project_id, folder_id, and learned from your files: predicted_tags,
          predicted_folder_id (min_score). Actions: add_tags, remove_tags, set_title, move, call_webhook, run_schema.
        </p>
        <p id="rule-problem" class="error" role="alert">{problem ?? ""}</p>
        {notice ? <p class="notice" role="status">{notice}</p> : null}
        <div class="row">
          <button type="submit">{editing ? "Save changes" : "Create rule"}</button>
          <button type="button" onClick={dryRun}>Dry run</button>
        </div>
        {dry ? (
          <div aria-live="polite" class="dry-run">
            <h3>Dry run: {dry.matched_count} of {dry.scanned_count} files would be touched</h3>
            <ul>
              {dry.files.map((f) => (
                <li key={f.id}><a href={`#/files/${f.id}`}>{f.title ?? f.filename}</a> <span class="hint">{f.media_type}</span></li>
              ))}
            </ul>
            {dry.has_more ? <p class="hint">…and {dry.matched_count - dry.files.length} more</p> : null}
          </div>
        ) : null}
      </form>
    </div>
  );
}

type AutoMatchingStatus = { trained_at: string | null; example_files: number; stale: boolean; labels: { kind: string; label: string; examples: number }[] };

/** What the organization's auto-matching model learned (GET /rules/auto-matching), and learning again on demand. */
function AutoMatching() {
  const [status, setStatus] = useState<AutoMatchingStatus | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const load = () => api("/rules/auto-matching").then(setStatus, (err) => setProblem(errorText(err)));
  // A training runs in the background: the status is asked again while the page is shown.
  usePolling(load, 5000, []);
  async function train() {
    setProblem(null);
    try {
      await api("/rules/auto-matching/train", { method: "POST" });
    } catch (err) {
      setProblem(errorText(err));
    }
  }
  const tags = status?.labels.filter((l) => l.kind === "tag") ?? [];
  const folders = status?.labels.filter((l) => l.kind === "folder") ?? [];
  return (
    <section aria-labelledby="auto-matching-title" class="auto-matching">
      <h3 id="auto-matching-title">Auto matching</h3>
      {status?.trained_at ? (
        <p>
          Learned from {status.example_files} {status.example_files === 1 ? "file" : "files"} with text ({new Date(status.trained_at).toLocaleString()})
          {status.stale ? "; the library changed since" : ""}.{" "}
          {tags.length || folders.length
            ? `Tags: ${tags.map((t) => `${t.label} (${t.examples})`).join(", ") || "none"}; folders: ${folders.length}.`
            : "No tag or folder has 5 files with text yet."}
        </p>
      ) : (
        <p class="hint">Nothing learned yet: a rule with predicted_tags or predicted_folder_id learns from the files that already carry a tag or sit in a folder (5 at least).</p>
      )}
      {problem ? <p class="error">{problem}</p> : null}
      <button type="button" onClick={train}>Learn from the library now</button>
    </section>
  );
}
