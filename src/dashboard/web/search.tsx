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

type Block = { kind: "text"; text: string } | { kind: "table"; rows: string[][] };

/** A passage's Markdown as paragraphs and small tables (a chunk of a table is its rows in pipes), the query's words marked. */
function Passage({ text, query }: { text: string; query: string }) {
  const blocks: Block[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    const last = blocks.at(-1);
    if (trimmed.startsWith("|")) {
      const cells = trimmed.replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
      // The row under a header (|---|---|) only says "header above".
      if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
      if (last?.kind === "table") last.rows.push(cells);
      else blocks.push({ kind: "table", rows: [cells] });
    } else if (trimmed) {
      if (last?.kind === "text") last.text += ` ${trimmed}`;
      else blocks.push({ kind: "text", text: trimmed });
    }
  }
  return (
    <div class="passage">
      {blocks.map((block, i) =>
        block.kind === "text" ? (
          <p key={i}>
            <Marked text={block.text} query={query} />
          </p>
        ) : (
          <div key={i} class="passage-table">
            <table>
              <tbody>
                {block.rows.map((row, r) => (
                  <tr key={r}>
                    {row.map((cell, c) => (
                      <td key={c}>
                        <Marked text={cell} query={query} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ),
      )}
    </div>
  );
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
                <Passage text={r.content.length > 700 ? `${r.content.slice(0, 700)}…` : r.content} query={asked} />
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </section>
  );
}
