/**
 * The dashboard's entry point: sign-in, then the library, upload and file pages, chosen by the
 * URL's hash so every page has an address that survives a reload.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { credentials } from "./api.ts";
import { FileDetail } from "./file-detail.tsx";
import { Activity } from "./activity.tsx";
import { Library } from "./library.tsx";
import { Search } from "./search.tsx";
import { SignIn } from "./sign-in.tsx";
import { Upload } from "./upload.tsx";
import "./styles.css";

function useHash(): string {
  const [hash, setHash] = useState(location.hash || "#/library");
  useEffect(() => {
    const changed = () => setHash(location.hash || "#/library");
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return hash;
}

function Page({ hash }: { hash: string }) {
  const file = /^#\/files\/([0-9a-f-]{36})$/.exec(hash);
  if (file) return <FileDetail id={file[1]!} />;
  if (hash === "#/upload") return <Upload />;
  if (hash === "#/search") return <Search />;
  if (hash === "#/activity") return <Activity />;
  return <Library />;
}

function App() {
  const [signedIn, setSignedIn] = useState(credentials.key() !== null);
  const hash = useHash();
  // A page change moves focus to the new page's heading, as a screen reader user expects.
  useEffect(() => {
    requestAnimationFrame(() => document.querySelector<HTMLElement>("main h1")?.focus());
  }, [hash]);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const current = (target: string) => (hash.startsWith(target) ? "page" : undefined);
  return (
    <>
      <a class="skip" href="#content" onClick={(e) => (e.preventDefault(), document.getElementById("content")?.focus())}>
        Skip to content
      </a>
      <header>
        <nav aria-label="Main">
          <span class="brand">Mediabox</span>
          <a href="#/library" aria-current={current("#/library")}>Library</a>
          <a href="#/upload" aria-current={current("#/upload")}>Upload</a>
          <a href="#/search" aria-current={current("#/search")}>Search documents</a>
          <a href="#/activity" aria-current={current("#/activity")}>Activity</a>
          <a href="/docs">API docs</a>
          <button
            type="button"
            class="link"
            onClick={() => {
              credentials.signOut();
              setSignedIn(false);
            }}
          >
            Sign out
          </button>
        </nav>
      </header>
      <main id="content" tabIndex={-1}>
        <Page hash={hash} />
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
