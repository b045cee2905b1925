/**
 * Custom extraction schemas: the organization's JSON Schemas for structured extraction, edited as
 * JSON with the server's validation messages shown as they come (depth, node and size limits,
 * allowed types and keywords are the server's rules; the page only checks that the text is JSON).
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

type Schema = { id: string; name: string; description: string | null; field_count: number; created_at: string };
const EXAMPLE = JSON.stringify({ type: "object", properties: { address: { type: "string", description: "Street address on the sign" }, rooms: { type: "integer" } }, required: ["address"] }, null, 2);

export function Schemas() {
  const [schemas, setSchemas] = useState<Schema[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [hint, setHint] = useState("");
  const [text, setText] = useState(EXAMPLE);
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = () => api("/custom-extraction-schemas?limit=500").then((r) => setSchemas(r.items), (err) => setProblem(err.message));
  useEffect(() => void load(), []);

  async function edit(id: string | null) {
    setProblem(null);
    setNotice(null);
    setEditing(id);
    if (!id) {
      setName("");
      setDescription("");
      setHint("");
      setText(EXAMPLE);
      return;
    }
    const schema = await api(`/custom-extraction-schemas/${id}`);
    setName(schema.name);
    setDescription(schema.description ?? "");
    setHint(schema.prompt_hint ?? "");
    setText(JSON.stringify(schema.schema, null, 2));
  }
  async function save(event: Event) {
    event.preventDefault();
    setProblem(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      setProblem(`The schema is not valid JSON: ${(err as Error).message}`);
      return;
    }
    const body = { name: name.trim(), description: description.trim() || null, prompt_hint: hint.trim() || null, schema: parsed };
    try {
      const saved = editing ? await api(`/custom-extraction-schemas/${editing}`, { method: "PUT", body }) : await api("/custom-extraction-schemas", { method: "POST", body });
      setEditing(saved.id);
      setNotice(`Saved "${saved.name}" (${saved.field_count} fields)`);
      load();
    } catch (err) {
      setProblem(errorText(err));
    }
  }
  async function remove(schema: Schema) {
    if (!confirm(`Delete the schema "${schema.name}"?`)) return;
    await api(`/custom-extraction-schemas/${schema.id}`, { method: "DELETE" }).catch((err) => setProblem(err.message));
    if (editing === schema.id) edit(null);
    load();
  }
  return (
    <section aria-labelledby="schemas-title" class="schemas">
      <h1 id="schemas-title" tabIndex={-1}>Extraction schemas</h1>
      <div class="split">
        <div>
          <button type="button" onClick={() => edit(null)}>New schema</button>
          <ul class="schema-list">
            {schemas.map((s) => (
              <li key={s.id} class={editing === s.id ? "current" : ""}>
                <button type="button" class="link" onClick={() => edit(s.id)}>{s.name}</button> <span class="hint">{s.field_count} fields</span>{" "}
                <button type="button" class="link" aria-label={`Delete ${s.name}`} onClick={() => remove(s)}>delete</button>
              </li>
            ))}
          </ul>
        </div>
        <form onSubmit={save} class="editor">
          <label>
            Name
            <input required maxLength={255} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            Description
            <input maxLength={1000} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            Prompt hint
            <input maxLength={2000} value={hint} onInput={(e) => setHint((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            JSON Schema
            <textarea class="code" rows={16} spellcheck={false} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} aria-describedby="schema-problem" />
          </label>
          <p id="schema-problem" class="error" role="alert">{problem ?? ""}</p>
          {notice ? <p class="notice" role="status">{notice}</p> : null}
          <button type="submit">{editing ? "Save changes" : "Create schema"}</button>
        </form>
      </div>
    </section>
  );
}
