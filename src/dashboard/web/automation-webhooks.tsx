/**
 * Webhooks: receivers (URL, events), their signing secret shown once at creation or rotation, a
 * test delivery, and the deliveries with their attempts; failed ones (the dead-letter list) can be
 * sent again.
 */
import { useState } from "preact/hooks";
import { api, errorText } from "./api.ts";
import { usePolling } from "./polling.ts";

const EVENTS = ["file.completed", "file.failed", "batch.completed", "rule.applied"];
type Webhook = { id: string; url: string; events: string[]; enabled: boolean; secret_hint: string; description: string | null; deliveries: { pending: number; delivered: number; failed: number } };
type Delivery = { id: string; webhook_id: string; url: string; event_type: string; status: string; attempts: number; last_status_code: number | null; last_error: string | null; next_attempt_at: string | null; created_at: string };

export function AutomationWebhooks() {
  const [hooks, setHooks] = useState<Webhook[]>([]);
  const [deliveries, setDeliveries] = useState<Delivery[]>([]);
  const [deadOnly, setDeadOnly] = useState(false);
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>(["file.completed"]);
  const [secret, setSecret] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const load = async () => {
    try {
      setHooks((await api("/webhooks?limit=100")).items);
      setDeliveries((await api(`/webhook-deliveries?limit=100${deadOnly ? "&status=failed" : ""}`)).items);
    } catch (err) {
      setProblem((err as Error).message);
    }
  };
  usePolling(load, 3000, [deadOnly]);

  async function create(event: Event) {
    event.preventDefault();
    setProblem(null);
    try {
      const made = await api("/webhooks", { method: "POST", body: { url: url.trim(), events } });
      setSecret(made.secret);
      setUrl("");
      load();
    } catch (err) {
      setProblem(errorText(err));
    }
  }
  const act = (path: string, method = "POST") => api(path, { method }).catch((err) => (setProblem(err.message), null));
  return (
    <div>
      <h2>Webhooks</h2>
      <form onSubmit={create} class="editor">
        <label>
          Receiver URL
          <input type="url" required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} placeholder="https://example.com/hooks/mediabox" />
        </label>
        <fieldset>
          <legend>Events</legend>
          {EVENTS.map((e) => (
            <label key={e} class="inline">
              <input type="checkbox" checked={events.includes(e)} onChange={() => setEvents(events.includes(e) ? events.filter((x) => x !== e) : [...events, e])} /> {e}
            </label>
          ))}
        </fieldset>
        <button type="submit">Add webhook</button>
      </form>
      <p class="error" role="alert">{problem ?? ""}</p>
      {secret ? (
        <p class="notice" role="status">
          Signing secret (shown once, store it to verify the Mediabox-Signature header): <code>{secret}</code>
        </p>
      ) : null}
      <table class="plain">
        <thead>
          <tr><th>URL</th><th>Events</th><th>Delivered</th><th>Pending</th><th>Failed</th><th><span class="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody>
          {hooks.map((h) => (
            <tr key={h.id}>
              <td>{h.url} {h.enabled ? "" : <span class="hint">(disabled)</span>}</td>
              <td>{h.events.join(", ")}</td>
              <td>{h.deliveries.delivered}</td>
              <td>{h.deliveries.pending}</td>
              <td>{h.deliveries.failed}</td>
              <td>
                <button type="button" class="link" onClick={async () => (await act(`/webhooks/${h.id}/test`), load())}>send test</button>{" "}
                <button type="button" class="link" onClick={async () => { const r = await act(`/webhooks/${h.id}/rotate-secret`); if (r) setSecret(r.secret); }}>rotate secret</button>{" "}
                <button type="button" class="link" onClick={async () => { if (confirm(`Delete the webhook to ${h.url}?`)) { await act(`/webhooks/${h.id}`, "DELETE"); load(); } }}>delete</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Deliveries</h2>
      <label class="inline">
        <input type="checkbox" checked={deadOnly} onChange={() => setDeadOnly(!deadOnly)} /> Failed only (dead letters)
      </label>
      <table class="plain">
        <thead>
          <tr><th>When</th><th>Event</th><th>To</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Next try</th><th><span class="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id}>
              <td>{new Date(d.created_at).toLocaleString()}</td>
              <td>{d.event_type}</td>
              <td>{d.url}</td>
              <td>{d.status}</td>
              <td>{d.attempts}</td>
              <td>{d.last_error ?? d.last_status_code ?? ""}</td>
              <td>{d.next_attempt_at ? new Date(d.next_attempt_at).toLocaleTimeString() : ""}</td>
              <td>{d.status === "failed" ? <button type="button" class="link" onClick={async () => (await act(`/webhook-deliveries/${d.id}/retry`), load())} aria-label={`Retry delivery ${d.id}`}>retry</button> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
