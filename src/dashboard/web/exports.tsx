/** Exports: the library's metadata as CSV, XLSX or DOCX with chosen columns; a download link when ready. */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

type Column = { field_key: string; display_name: string; group: string };

export function Exports() {
  const [groups, setGroups] = useState<Record<string, Column[]>>({});
  const [chosen, setChosen] = useState<Set<string>>(new Set(["filename", "title", "tags", "description", "created_at"]));
  const [format, setFormat] = useState("csv");
  const [result, setResult] = useState<{ url: string; count: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void api("/files/export/columns").then((r) => setGroups(r.groups), (err) => setError(err.message)), []);
  const toggle = (key: string) => setChosen((c) => {
    const next = new Set(c);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    return next;
  });
  async function run(event: Event) {
    event.preventDefault();
    setError(null);
    setResult(null);
    try {
      const order = Object.values(groups).flat().map((c) => c.field_key).filter((k) => chosen.has(k));
      const answer = await api("/files/export", { method: "POST", body: { format, columns: order.map((field_key) => ({ field_key })) } });
      setResult({ url: answer.download_url, count: answer.record_count });
    } catch (err) {
      setError(errorText(err));
    }
  }
  return (
    <section aria-labelledby="exports-title">
      <h1 id="exports-title" tabIndex={-1}>Export</h1>
      <form onSubmit={run} class="export-form">
        <label>
          Format
          <select value={format} onChange={(e) => setFormat((e.target as HTMLSelectElement).value)}>
            <option value="csv">CSV</option>
            <option value="xlsx">Excel (XLSX)</option>
            <option value="docx">Word (DOCX)</option>
          </select>
        </label>
        {Object.entries(groups).map(([group, columns]) => (
          <fieldset key={group}>
            <legend>{group}</legend>
            {columns.map((c) => (
              <label key={c.field_key} class="inline">
                <input type="checkbox" checked={chosen.has(c.field_key)} onChange={() => toggle(c.field_key)} /> {c.display_name}
              </label>
            ))}
          </fieldset>
        ))}
        <button type="submit" disabled={chosen.size === 0}>Export every file</button>
      </form>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {result ? (
        <p class="notice" role="status">
          {result.count} file(s) exported. <a href={result.url}>Download</a> (the link works for an hour).
        </p>
      ) : null}
    </section>
  );
}
