/**
 * Search inside documents (POST /files/search): the passages that answer a question, by meaning
 * and by keyword, with the query's words marked and a link to the document.
 */
import { useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

type Result = { chunk_id: string; document_id: string; document_filename: string; content: string; page_numbers: number[]; heading_hierarchy: string[]; similarity_score: number | null };

/** The passage with the query's words (4+ letters, any ending) wrapped in <mark>. */
function Marked({ text, query }: { text: string; query: string }) {
  const stems = query.toLowerCase().match(/\p{L}{4,}/gu)?.map((w) => w.slice(0, Math.max(4, w.length - 3))) ?? [];
  if (!stems.length) return <>{text}</>;
  const pattern = new RegExp(`(${stems.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})\\p{L}*`, "giu");
  const parts: (string | preact.JSX.Element)[] = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    parts.push(text.slice(last, match.index));
    parts.push(<mark key={match.index}>{match[0]}</mark>);
    last = match.index! + match[0].length;
  }
  parts.push(text.slice(last));
  return <>{parts}</>;
}

export function Search() {
  const [query, setQuery] = useState("");
  const [asked, setAsked] = useState("");
  const [results, setResults] = useState<Result[] | null>(null);
  const [info, setInfo] = useState<string>("");
  const [error, setError] = useState<string | null>(null);
  async function submit(event: Event) {
    event.preventDefault();
    if (!query.trim()) return;
    setError(null);
    try {
      const answer = await api("/files/search", { method: "POST", body: { query: query.trim(), limit: 20 } });
      setResults(answer.results);
      setAsked(query.trim());
      const how = answer.retrieval ? (answer.retrieval.vector ? `meaning (${answer.retrieval.vector_model}) and keywords` : "keywords only") : "";
      setInfo(`${answer.total_count} passage(s) in ${Math.round(answer.search_time_ms)} ms${how ? `, by ${how}` : ""}`);
    } catch (err) {
      setError(errorText(err));
    }
  }
  return (
    <section aria-labelledby="search-title">
      <h1 id="search-title" tabIndex={-1}>Search documents</h1>
      <form class="ask" role="search" onSubmit={submit}>
        <label for="question">Question or words</label>
        <div class="row">
          <input id="question" type="search" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} placeholder="When can the tenant end the lease?" />
          <button type="submit">Search</button>
        </div>
      </form>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {results ? (
        <>
          <p class="count" aria-live="polite">{info}</p>
          <ol class="passages">
            {results.map((r) => (
              <li key={r.chunk_id}>
                <p class="source">
                  <a href={`#/files/${r.document_id}`}>{r.document_filename}</a>
                  {r.page_numbers.length ? ` · page ${r.page_numbers.join(", ")}` : ""}
                  {r.heading_hierarchy.length ? ` · ${r.heading_hierarchy.join(" › ")}` : ""}
                  {r.similarity_score !== null ? ` · ${Math.round(r.similarity_score * 100)} %` : ""}
                </p>
                <p class="passage">
                  <Marked text={r.content.length > 700 ? `${r.content.slice(0, 700)}…` : r.content} query={asked} />
                </p>
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </section>
  );
}
