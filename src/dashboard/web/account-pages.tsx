/**
 * The pages mailed links open (`/auth/verify-email`, `/auth/reset-password`,
 * `/auth/accept-invite`, each with `?token=`): they post the token to the API and say what
 * happened. The token leaves the address bar once used.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "./api.ts";

const tokenOf = () => new URLSearchParams(location.search).get("token") ?? "";

function Done({ text }: { text: string }) {
  return (
    <p class="notice" role="status">
      {text} <a href="/">Continue to Mediabox</a>
    </p>
  );
}

function VerifyEmail() {
  const [state, setState] = useState<{ ok: boolean; text: string } | null>(null);
  useEffect(() => {
    api("/auth/session/verify-email", { method: "POST", body: { token: tokenOf() } }).then(
      () => setState({ ok: true, text: "Your address is verified." }),
      (err) => setState({ ok: false, text: errorText(err) }),
    );
    history.replaceState(null, "", location.pathname);
  }, []);
  if (!state) return <p aria-live="polite">Checking the link…</p>;
  return state.ok ? <Done text={state.text} /> : <p class="error" role="alert">{state.text}</p>;
}

/** A new password for a reset link or an invitation (the same form, a different endpoint). */
function ChoosePassword({ endpoint, done }: { endpoint: string; done: string }) {
  const [token] = useState(tokenOf);
  const [password, setPassword] = useState("");
  const [name, setName] = useState("");
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => history.replaceState(null, "", location.pathname), []);
  async function submit(event: Event) {
    event.preventDefault();
    setError(null);
    try {
      await api(endpoint, { method: "POST", body: { token, password, ...(name.trim() ? { name: name.trim() } : {}) } });
      setResult(done);
    } catch (err) {
      setError(errorText(err));
    }
  }
  if (result) return <Done text={result} />;
  return (
    <form onSubmit={submit}>
      {endpoint.endsWith("accept-invite") ? (
        <>
          <label for="name">Your name (optional)</label>
          <input id="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} autocomplete="name" />
        </>
      ) : null}
      <label for="new-password">New password</label>
      <input id="new-password" type="password" autocomplete="new-password" minLength={10} required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
      <p class="hint">At least 10 characters; not a common password.</p>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <button type="submit">Save</button>
    </form>
  );
}

/** The page for a mailed link's path, or null when the path is not one. */
export function accountPage(path: string) {
  const page =
    path === "/auth/verify-email"
      ? { title: "Verify your address", body: <VerifyEmail /> }
      : path === "/auth/reset-password"
        ? { title: "Choose a new password", body: <ChoosePassword endpoint="/auth/session/password-reset/complete" done="Your password is changed; sign in with it." /> }
        : path === "/auth/accept-invite"
          ? { title: "Join the organization", body: <ChoosePassword endpoint="/auth/session/accept-invite" done="You are in." /> }
          : null;
  if (!page) return null;
  return (
    <main class="sign-in">
      <h1 tabIndex={-1}>{page.title}</h1>
      {page.body}
    </main>
  );
}
