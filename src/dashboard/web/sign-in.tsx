/**
 * Signing in: with email and password (a session cookie), through the site's identity provider
 * when one is configured, or with an API key (kept for this tab only). "Forgot password" mails a
 * reset link; answers never say whether an address has an account. On the first run (no user
 * yet) the page makes the owner instead. Only the ways this appliance has set up are offered.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, credentials, errorText } from "./api.ts";

type Mode = "password" | "key" | "forgot" | "register" | "owner";

export interface SignInOptions {
  signed_in: boolean;
  needs_owner: boolean;
  setup_token_required: boolean;
  identity_provider: string | null;
  registration_open: boolean;
  mail_configured: boolean;
}

/** The sign-in options, or those every appliance has when they cannot be read. */
export function signInOptions(): Promise<SignInOptions> {
  return api<SignInOptions>("/auth/session/options").catch(() => ({
    signed_in: false, needs_owner: false, setup_token_required: false, identity_provider: null, registration_open: false, mail_configured: false,
  }));
}

export function SignIn({ options, onSignedIn }: { options: SignInOptions; onSignedIn: () => void }) {
  const [mode, setMode] = useState<Mode>(options.needs_owner ? "owner" : "password");
  const [name, setName] = useState("");
  const [setupToken, setSetupToken] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [key, setKey] = useState("");
  const [organization, setOrganization] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(() => {
    const failed = new URLSearchParams(location.search).get("sign_in_error");
    return failed ? `Sign-in through your identity provider failed (${failed}).` : null;
  });
  const [busy, setBusy] = useState(false);
  const forms = useRef<HTMLDivElement>(null);
  const switched = useRef(false);
  // Switching between the forms puts the cursor in the new form's first field.
  useEffect(() => {
    if (switched.current) forms.current?.querySelector<HTMLInputElement>("input")?.focus();
    switched.current = true;
  }, [mode]);

  async function attempt(action: () => Promise<void>) {
    setBusy(true);
    setError(null);
    setMessage(null);
    try {
      await action();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  const withPassword = (event: Event) => {
    event.preventDefault();
    attempt(async () => {
      await api("/auth/session/login", { method: "POST", body: { email: email.trim(), password } });
      onSignedIn();
    });
  };
  const withKey = (event: Event) => {
    event.preventDefault();
    attempt(async () => {
      credentials.signIn(key.trim());
      try {
        await api("/files?limit=1");
        onSignedIn();
      } catch (err) {
        credentials.signOut();
        throw err;
      }
    });
  };
  const forgot = (event: Event) => {
    event.preventDefault();
    attempt(async () => {
      await api("/auth/session/password-reset/request", { method: "POST", body: { email: email.trim() } });
      setMessage("If that address has an account, a link to choose a new password is on its way.");
    });
  };
  const register = (event: Event) => {
    event.preventDefault();
    attempt(async () => {
      await api("/auth/session/register", { method: "POST", body: { email: email.trim(), password, organization_name: organization.trim() } });
      setMessage("Check your mail: a link to verify your address is on its way. Then sign in.");
      setMode("password");
    });
  };
  const createOwner = (event: Event) => {
    event.preventDefault();
    attempt(async () => {
      await api("/auth/session/setup-owner", {
        method: "POST",
        body: { organization_name: organization.trim(), email: email.trim(), password, ...(name.trim() ? { name: name.trim() } : {}), ...(setupToken.trim() ? { setup_token: setupToken.trim() } : {}) },
      });
      onSignedIn();
    });
  };
  const withProvider = () =>
    attempt(async () => {
      const started = await api("/auth/session/oidc/start", { method: "POST", body: { return_to: "/" } });
      location.assign(started.authorization_url);
    });

  return (
    <main class="sign-in">
      <h1 tabIndex={-1}>{mode === "owner" ? "Welcome to Mediabox" : "Mediabox"}</h1>
      {message ? <p class="notice" role="status">{message}</p> : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      {/* Keyed forms: Preact would otherwise reuse one form's fields for the next (a maxLength left behind as 0). */}
      <div ref={forms}>
      {mode === "owner" ? (
        <form key="owner" onSubmit={createOwner} aria-labelledby="owner-title">
          <h2 id="owner-title">Create the owner</h2>
          <p class="hint">
            Nobody has an account here yet. The first account owns this appliance: it invites the others and makes API keys. This form is offered once.
          </p>
          <label for="owner-organization">Organization name</label>
          <input id="owner-organization" required maxLength={255} autocomplete="organization" value={organization} onInput={(e) => setOrganization((e.target as HTMLInputElement).value)} />
          <label for="owner-name">Your name <span class="hint">(optional)</span></label>
          <input id="owner-name" maxLength={200} autocomplete="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          <label for="owner-email">Email</label>
          <input id="owner-email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          <label for="owner-password">Password</label>
          <input id="owner-password" type="password" autocomplete="new-password" minLength={10} required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
          <p class="hint">At least 10 characters; not a common password.</p>
          {options.setup_token_required ? (
            <>
              <label for="setup-token">Setup token</label>
              <input id="setup-token" required autocomplete="off" value={setupToken} onInput={(e) => setSetupToken((e.target as HTMLInputElement).value)} />
              <p class="hint">You are not on the appliance's own machine: copy the token from the server's log (the line that starts with "first run").</p>
            </>
          ) : null}
          <button type="submit" disabled={busy}>{busy ? "Creating…" : "Create the owner"}</button>
          <p class="alternatives">
            <button type="button" class="link" onClick={() => setMode("key")}>Use an API key instead</button>
          </p>
        </form>
      ) : mode === "password" ? (
        <form key="password" onSubmit={withPassword}>
          <label for="email">Email</label>
          <input id="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          <label for="password">Password</label>
          <input id="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
          <button type="submit" disabled={busy}>{busy ? "Signing in…" : "Sign in"}</button>
          <p class="alternatives">
            <button type="button" class="link" onClick={() => setMode("forgot")}>Forgot password?</button>
            {options.identity_provider ? (
              <button type="button" class="link" onClick={withProvider}>Sign in with your organization's identity provider</button>
            ) : null}
            <button type="button" class="link" onClick={() => setMode("key")}>Use an API key instead</button>
            {options.registration_open ? (
              <button type="button" class="link" onClick={() => setMode("register")}>Create an account</button>
            ) : null}
          </p>
        </form>
      ) : mode === "register" ? (
        <form key="register" onSubmit={register}>
          <label for="register-email">Email</label>
          <input id="register-email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          <label for="register-password">Password</label>
          <input id="register-password" type="password" autocomplete="new-password" minLength={10} required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
          <p class="hint">At least 10 characters; not a common password.</p>
          <label for="register-organization">Organization name</label>
          <input id="register-organization" required maxLength={255} value={organization} onInput={(e) => setOrganization((e.target as HTMLInputElement).value)} />
          <button type="submit" disabled={busy}>Create account</button>
          <p class="alternatives">
            <button type="button" class="link" onClick={() => setMode("password")}>Back to sign in</button>
          </p>
        </form>
      ) : mode === "key" ? (
        <form key="key" onSubmit={withKey}>
          <label for="api-key">API key</label>
          <input id="api-key" type="password" autocomplete="off" required value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} placeholder="mbx_…" />
          <p class="hint">It stays in this tab until you sign out or close it.</p>
          <button type="submit" disabled={busy}>{busy ? "Signing in…" : "Sign in"}</button>
          <p class="alternatives">
            <button type="button" class="link" onClick={() => setMode(options.needs_owner ? "owner" : "password")}>
              {options.needs_owner ? "Create the owner instead" : "Sign in with email and password"}
            </button>
          </p>
        </form>
      ) : (
        <form key="forgot" onSubmit={forgot}>
          <label for="reset-email">Email</label>
          <input id="reset-email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          <button type="submit" disabled={busy}>Send me a link</button>
          <p class="alternatives">
            <button type="button" class="link" onClick={() => setMode("password")}>Back to sign in</button>
          </p>
        </form>
      )}
      </div>
    </main>
  );
}
