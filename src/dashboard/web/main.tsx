/**
 * The dashboard's entry point: the pages mailed links open, sign-in, then the library, upload,
 * search, activity, trash, API keys and file pages, chosen by the URL's hash so every page has an
 * address that survives a reload. A session (cookie) and an API key (this tab only) both work.
 */
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { accountPage } from "./account-pages.tsx";
import { Activity } from "./activity.tsx";
import { Automation } from "./automation.tsx";
import { Cloud } from "./cloud.tsx";
import { api, ApiFailure, credentials, currentSession, errorText, type SessionInfo } from "./api.ts";
import { ApiKeys } from "./api-keys.tsx";
import { FileDetail } from "./file-detail.tsx";
import { Duplicates } from "./duplicates.tsx";
import { Exports } from "./exports.tsx";
import { Lazy } from "./lazy.tsx";
import { Library } from "./library.tsx";
import { People, PersonPage } from "./people.tsx";
import { Photos } from "./photos.tsx";
import { Schemas } from "./schemas.tsx";
import { Members } from "./members.tsx";
import { Search } from "./search.tsx";
import { SignIn, signInOptions, type SignInOptions } from "./sign-in.tsx";
import { Trash } from "./trash.tsx";
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

function Page({ hash, me, canEdit }: { hash: string; me: string; canEdit: boolean }) {
  const file = /^#\/files\/([0-9a-f-]{36})$/.exec(hash);
  if (file) return <FileDetail id={file[1]!} />;
  const person = /^#\/people\/([0-9a-f-]{36})$/.exec(hash);
  if (person) return <PersonPage id={person[1]!} canEdit={canEdit} />;
  if (hash === "#/people") return <People canEdit={canEdit} />;
  if (hash === "#/duplicates") return <Duplicates canEdit={canEdit} />;
  const map = /^#\/map(?:\/@(-?[\d.]+),(-?[\d.]+),([\d.]+))?$/.exec(hash);
  if (map) {
    const start = map[1] ? { latitude: Number(map[1]), longitude: Number(map[2]), zoom: Number(map[3]) } : null;
    return <Lazy key={hash} load={() => import("./map-page.tsx")} render={(m) => <m.MapPage start={start} />} fallback={<p aria-live="polite">Loading the map…</p>} />;
  }
  if (hash === "#/upload") return <Upload />;
  if (hash === "#/photos") return <Photos />;
  if (hash === "#/search") return <Search />;
  if (hash === "#/activity") return <Activity />;
  if (hash === "#/keys") return <ApiKeys />;
  if (hash === "#/members") return <Members me={me} />;
  if (hash === "#/cloud") return <Cloud />;
  if (hash === "#/schemas") return <Schemas />;
  if (hash === "#/export") return <Exports />;
  if (hash === "#/trash") return <Trash />;
  if (hash.startsWith("#/automation")) return <Automation hash={hash} />;
  return <Library canEdit={canEdit} />;
}

type Auth = { kind: "unknown" } | { kind: "none"; options: SignInOptions } | { kind: "key" } | { kind: "session"; session: SessionInfo };

function OrganizationSwitch({ session, onSwitched }: { session: SessionInfo; onSwitched: () => void }) {
  if (session.organizations.length < 2) return <span class="org">{session.organization.name}</span>;
  return (
    <label class="inline org">
      <span class="visually-hidden">Organization</span>
      <select
        value={session.organization.id}
        onChange={async (e) => {
          await api("/auth/session/switch-organization", { method: "POST", body: { organization_id: (e.target as HTMLSelectElement).value } });
          onSwitched();
        }}
      >
        {session.organizations.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name} ({o.role})
          </option>
        ))}
      </select>
    </label>
  );
}

/** The pages listed under "More". */
const MORE_PAGES = ["#/trash", "#/cloud", "#/automation", "#/schemas", "#/export", "#/keys", "#/members"];

/**
 * A menu of the top bar: its open state and the element holding its button and list; it closes
 * on Escape (focus back on its button) and on a click anywhere else, as a menu does.
 */
function useMenu() {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const outside = (e: MouseEvent) => ref.current && !ref.current.contains(e.target as Node) && setOpen(false);
    const escape = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setOpen(false);
      ref.current?.querySelector<HTMLButtonElement>(".menu-toggle-button")?.focus();
    };
    document.addEventListener("click", outside);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("click", outside);
      document.removeEventListener("keydown", escape);
    };
  }, [open]);
  return { open, setOpen, ref };
}

function App() {
  const [auth, setAuth] = useState<Auth>({ kind: "unknown" });
  const [menuOpen, setMenuOpen] = useState(false);
  const [signOutProblem, setSignOutProblem] = useState<string | null>(null);
  const more = useMenu();
  const account = useMenu();
  const hash = useHash();
  useEffect(() => setMenuOpen(false), [hash]);
  const check = async () => {
    if (credentials.key()) return setAuth({ kind: "key" });
    // Asked first, so a signed-out page view makes no request that answers 401.
    const options = await signInOptions();
    const session = options.signed_in ? await currentSession().catch(() => null) : null;
    setAuth(session ? { kind: "session", session } : { kind: "none", options: { ...options, signed_in: false } });
  };
  useEffect(() => void check(), []);
  // A page change moves focus to the new page's heading, as a screen reader user expects. A page
  // that shows its heading once its data has arrived (a file) is watched until it does, unless
  // the user has moved focus somewhere meanwhile. A heading is focused once: the sign-in page's
  // heading was focused as it appeared and again when the effect ran after the render, taking
  // back the focus a quick Tab had already moved on.
  const focusedHeading = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const heading = () => document.querySelector<HTMLElement>("main h1");
    const idle = () => !document.activeElement || document.activeElement === document.body || !document.activeElement.isConnected;
    const focus = (h: HTMLElement) => {
      focusedHeading.current = h;
      h.focus();
    };
    const now = heading();
    if (now) {
      if (now !== focusedHeading.current) focus(now);
      return;
    }
    const observer = new MutationObserver(() => {
      const found = heading();
      if (!found) return;
      observer.disconnect();
      if (idle()) focus(found);
    });
    observer.observe(document.body, { childList: true, subtree: true });
    const timer = setTimeout(() => observer.disconnect(), 30_000);
    return () => {
      observer.disconnect();
      clearTimeout(timer);
    };
  }, [hash, auth.kind]);

  const mailed = accountPage(location.pathname);
  if (mailed) return mailed;
  if (auth.kind === "unknown") return <p aria-live="polite">Loading…</p>;
  if (auth.kind === "none") return <SignIn options={auth.options} onSignedIn={check} />;
  const current = (target: string) => (hash.startsWith(target) ? "page" : undefined);
  const manager = auth.kind === "session" && ["owner", "admin"].includes(auth.session.role);
  async function signOut() {
    if (auth.kind === "session") {
      try {
        await api("/auth/session/logout", { method: "POST" });
      } catch (err) {
        // A 401 means the server has already ended the session. Any other refusal (rate limit,
        // CSRF, network) leaves it live: showing the sign-in form then would hide a session
        // someone at this browser could still use.
        if (!(err instanceof ApiFailure && err.status === 401)) {
          setSignOutProblem(`Not signed out: ${errorText(err)}. This session is still active; try again.`);
          return;
        }
      }
    }
    setSignOutProblem(null);
    credentials.signOut();
    setAuth({ kind: "unknown" });
    await check();
  }
  return (
    <>
      <a class="skip" href="#content" onClick={(e) => (e.preventDefault(), document.getElementById("content")?.focus())}>
        Skip to content
      </a>
      <header>
        <nav aria-label="Main" class={menuOpen ? "open" : ""}>
          <a class="brand" href="#/library">Mediabox</a>
          {/* Phones and narrow windows fold the links under one button. */}
          <button type="button" class="menu-toggle secondary" aria-expanded={menuOpen} aria-controls="main-links" onClick={() => setMenuOpen(!menuOpen)}>
            Menu
          </button>
          <div
            class="links"
            id="main-links"
            onClick={(e) => {
              if (!(e.target as HTMLElement).closest("a")) return;
              setMenuOpen(false);
              more.setOpen(false);
            }}
          >
            <a href="#/library" aria-current={current("#/library")}>Library</a>
            <a href="#/photos" aria-current={current("#/photos")}>Photos</a>
            <a href="#/people" aria-current={current("#/people")}>People</a>
            <a href="#/map" aria-current={current("#/map")}>Map</a>
            <a href="#/duplicates" aria-current={current("#/duplicates")}>Duplicates</a>
            <a href="#/upload" aria-current={current("#/upload")}>Upload</a>
            <a href="#/search" aria-current={current("#/search")}>Search documents</a>
            <a href="#/activity" aria-current={current("#/activity")}>Activity</a>
            {/* What is used now and then, folded under "More" on wide screens; listed with the rest in the phone menu. */}
            <div class={`more${more.open ? " open" : ""}`} ref={more.ref}>
              <button
                type="button"
                class={`link more-toggle menu-toggle-button${MORE_PAGES.some((p) => hash.startsWith(p)) ? " current" : ""}`}
                aria-expanded={more.open}
                aria-controls="more-links"
                onClick={() => more.setOpen(!more.open)}
              >
                More
              </button>
              <div class="more-links" id="more-links">
                <a href="#/trash" aria-current={current("#/trash")}>Trash</a>
                <a href="#/cloud" aria-current={current("#/cloud")}>Cloud drives</a>
                <a href="#/automation" aria-current={current("#/automation")}>Automation</a>
                <a href="#/schemas" aria-current={current("#/schemas")}>Schemas</a>
                <a href="#/export" aria-current={current("#/export")}>Export</a>
                {manager ? <a href="#/keys" aria-current={current("#/keys")}>API keys</a> : null}
                {manager ? <a href="#/members" aria-current={current("#/members")}>Members</a> : null}
                <a href="/docs">API docs</a>
              </div>
            </div>
            {auth.kind === "session" ? (
              // Who is signed in, in which organization, and signing out: under the organization's name.
              <div class={`who account${account.open ? " open" : ""}`} ref={account.ref}>
                <button
                  type="button"
                  class="link account-toggle menu-toggle-button"
                  aria-expanded={account.open}
                  aria-controls="account-panel"
                  aria-label={`Account: ${auth.session.user.email}, ${auth.session.organization.name}`}
                  onClick={() => account.setOpen(!account.open)}
                >
                  {auth.session.organization.name}
                </button>
                <div class="account-panel" id="account-panel">
                  <span class="email">{auth.session.user.email}</span>
                  <OrganizationSwitch session={auth.session} onSwitched={() => location.reload()} />
                  <button type="button" class="link" onClick={signOut}>
                    Sign out
                  </button>
                </div>
              </div>
            ) : (
              <span class="who">
                <span>API key</span>
                <button type="button" class="link" onClick={signOut}>
                  Sign out
                </button>
              </span>
            )}
          </div>
        </nav>
      </header>
      <main id="content" tabIndex={-1}>
        {signOutProblem ? (
          <p class="error" role="alert">
            {signOutProblem}
          </p>
        ) : null}
        <Page hash={hash} me={auth.kind === "session" ? auth.session.user.email : ""} canEdit={auth.kind !== "session" || auth.session.permissions.includes("edit")} />
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
