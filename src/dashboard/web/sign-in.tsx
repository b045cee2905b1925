/** Sign-in: with an API key of the organization (kept for this browser tab only). */
import { useState } from "preact/hooks";
import { api, ApiFailure, credentials } from "./api.ts";

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    credentials.signIn(key.trim());
    try {
      await api("/files?limit=1");
      onSignedIn();
    } catch (err) {
      credentials.signOut();
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <main class="sign-in">
      <h1>Mediabox</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" required value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} placeholder="mbx_…" />
        <p class="hint">Create one with <code>mediabox keys create --org NAME</code>. It stays in this tab until you sign out.</p>
        {error ? <p class="error" role="alert">{error}</p> : null}
        <button type="submit" disabled={busy}>{busy ? "Signing in…" : "Sign in"}</button>
      </form>
    </main>
  );
}
