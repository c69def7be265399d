// Signing in: the reader pastes a credential (a token or the administrator
// key), the page asks GET /api/whoami who it is, and every API call sends
// it from then on (src/api.ts). It is kept in sessionStorage, so it lasts
// as long as the tab and no longer: a shared browser must not keep an
// administrator key. The answer's role decides which write controls the
// views show (can); with public reads off and no credential, the page asks
// for one instead of failing every view.

import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, setCredential, type Credential, type Role, type Whoami } from "./api";
import { useLiveClock } from "./live";

/** STORAGE_KEY names the credential in sessionStorage. */
export const STORAGE_KEY = "foundry.dashboard.credential";

/** ACTIONS are the dashboard's writes and the roles that may make them (docs/api.md). */
const ACTIONS = {
  /** POST /api/ideas/{id}/advance. */
  advance: ["operator", "admin"],
  /** POST /api/agent/tasks/{id}/retry, /api/agent/tasks/retry and /api/agent/tasks/{id}/cancel. */
  tasks: ["operator", "admin"],
} satisfies Record<string, Role[]>;

export type Action = keyof typeof ACTIONS;

/** Kind is how the sign-in form sends the value: detected, or chosen. */
export type Kind = "auto" | Credential["kind"];

/**
 * kindsToTry says how to send a pasted value: fdt_… is an API token; 64
 * hex characters a session token, or else an administrator key of that
 * form (tried second); anything else is the administrator key.
 */
export function kindsToTry(value: string, kind: Kind): Credential["kind"][] {
  if (kind !== "auto") return [kind];
  if (value.startsWith("fdt_")) return ["bearer"];
  if (/^[0-9a-f]{64}$/i.test(value)) return ["bearer", "admin"];
  return ["admin"];
}

function load(): Credential | null {
  try {
    const c = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? "null") as Partial<Credential> | null;
    if (c && (c.kind === "bearer" || c.kind === "admin") && typeof c.value === "string" && c.value) {
      return { kind: c.kind, value: c.value };
    }
  } catch {
    // Unreadable (storage off, or not ours): signed out.
  }
  return null;
}

function save(c: Credential | null) {
  try {
    if (c) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(c));
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage off: the sign-in lasts until the page is reloaded.
  }
}

/** whoLabel names a principal for people: its handle, its token's name, or the key. */
export function whoLabel(w: Whoami): string {
  switch (w.kind) {
    case "session":
      return w.handle ?? w.contributor_id ?? "a contributor";
    case "token":
      return w.name ?? w.token_id ?? "an API token";
    case "admin":
      return "the administrator key";
    default:
      return "nobody";
  }
}

interface Auth {
  /** ready is false until the first GET /api/whoami has answered (or failed). */
  ready: boolean;
  signedIn: boolean;
  /** who is the latest answer of GET /api/whoami; null when it failed. */
  who: Whoami | null;
  /** readsNeedCredential: public reads are off and nobody is signed in. */
  readsNeedCredential: boolean;
  /** notice says why the page signed out by itself ("token revoked"). */
  notice: string;
  /** signIn tries a value; it answers null when signed in, else why not. */
  signIn: (value: string, kind: Kind) => Promise<string | null>;
  signOut: () => void;
  /** can says whether the role may make a write: the views hide the control when not. */
  can: (action: Action) => boolean;
}

const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error("useAuth outside AuthProvider");
  return auth;
}

const failure = (err: unknown) => (err instanceof ApiError ? err.detail : err instanceof Error ? err.message : String(err));

export function AuthProvider({ children }: { children: ComponentChildren }) {
  const live = useLiveClock();
  const [credential, setCred] = useState<Credential | null>(() => {
    const c = load();
    setCredential(c);
    return c;
  });
  const [who, setWho] = useState<Whoami | null>(null);
  const [ready, setReady] = useState(false);
  const [notice, setNotice] = useState("");
  // Whether reads are public is the deployment's, whoever asks: kept apart
  // from who, so signing out asks for a credential at once.
  const [publicReads, setPublicReads] = useState(true);
  const lastWho = useRef("");

  const use = useCallback((c: Credential | null) => {
    setCredential(c);
    save(c);
    setCred(c);
  }, []);

  const keep = useCallback((w: Whoami | null) => {
    // The same answer keeps its object, so nothing re-renders.
    const json = JSON.stringify(w);
    if (json === lastWho.current) return;
    lastWho.current = json;
    setWho(w);
    if (w) setPublicReads(w.public_reads !== false);
  }, []);

  // Who the credential is, now and on every tick of the live clock: a
  // token revoked or expired meanwhile signs the page out, saying why,
  // rather than leaving every view failing with a 401.
  useEffect(() => {
    const ctrl = new AbortController();
    api
      .whoami(credential, ctrl.signal)
      .then((w) => {
        if (ctrl.signal.aborted) return;
        keep(w);
        setReady(true);
      })
      .catch((err: unknown) => {
        if (ctrl.signal.aborted) return;
        if (credential && err instanceof ApiError && err.status === 401) {
          setNotice(`Signed out: the credential no longer works (${err.detail}).`);
          use(null);
          // The views' reads failed with it: read again without it, now.
          live.refresh();
          return;
        }
        // No answer (an older Foundry, the network): keep what was known;
        // a first load goes on as if reads were public.
        setReady(true);
      });
    return () => ctrl.abort();
  }, [credential, live.tick]);

  const signIn = useCallback(
    async (raw: string, kind: Kind): Promise<string | null> => {
      const value = raw.trim();
      if (!value) return "paste a token or the administrator key first";
      let why = "";
      for (const k of kindsToTry(value, kind)) {
        const c: Credential = { kind: k, value };
        try {
          const w = await api.whoami(c);
          keep(w);
          setNotice("");
          use(c);
          return null;
        } catch (err) {
          // A 64-hex value that is not a session token may be the key.
          if (!(err instanceof ApiError && err.status === 401)) return failure(err);
          why ||= err.detail;
        }
      }
      return why;
    },
    [keep, use],
  );

  const signOut = useCallback(() => {
    setNotice("");
    use(null);
  }, [use]);

  // Until whoami has answered for the credential in use, the role is unknown.
  const current = who && (credential ? who.kind !== "anonymous" : who.kind === "anonymous") ? who : null;
  const role: Role = current?.role ?? "none";
  const can = useCallback((action: Action) => (ACTIONS[action] as Role[]).includes(role), [role]);

  return (
    <AuthContext.Provider
      value={{
        ready,
        signedIn: credential !== null,
        who: current,
        readsNeedCredential: !credential && !publicReads,
        notice,
        signIn,
        signOut,
        can,
      }}
    >
      {children}
    </AuthContext.Provider>
  );
}

/** SignInForm takes a credential; idPrefix keeps its ids unique on the page. */
export function SignInForm({ idPrefix, onDone, onCancel }: { idPrefix: string; onDone?: () => void; onCancel?: () => void }) {
  const auth = useAuth();
  const [value, setValue] = useState("");
  const [kind, setKind] = useState<Kind>("auto");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => input.current?.focus(), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    const why = await auth.signIn(value, kind);
    setBusy(false);
    if (why === null) {
      setValue("");
      onDone?.();
    } else {
      setError(why);
      input.current?.focus();
    }
  };

  return (
    <form
      class="signin-form"
      aria-label="Sign in"
      onSubmit={submit}
      onKeyDown={(e) => {
        if (e.key === "Escape" && onCancel) onCancel();
      }}
    >
      <div class="field">
        <label for={`${idPrefix}-value`}>Token or administrator key</label>
        <input
          id={`${idPrefix}-value`}
          ref={input}
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          aria-describedby={`${idPrefix}-help`}
          aria-invalid={error ? true : undefined}
        />
      </div>
      <div class="field">
        <label for={`${idPrefix}-kind`}>Send it as</label>
        <select id={`${idPrefix}-kind`} value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
          <option value="auto">Detect from the value</option>
          <option value="bearer">Token (Authorization: Bearer)</option>
          <option value="admin">Administrator key (X-API-Key)</option>
        </select>
      </div>
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      <p id={`${idPrefix}-help`} class="muted help">
        An API token (<code>fdt_…</code>) or your session token is sent as a Bearer token, anything else as the
        administrator key. Kept in this tab only, until you sign out or close it.
      </p>
      {error && (
        <p class="error" role="alert">
          Not signed in: {error}
        </p>
      )}
    </form>
  );
}

/** AuthControls is the header's part: who is signed in and Sign out, or Sign in. */
export function AuthControls() {
  const auth = useAuth();
  const [open, setOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const signOutButton = useRef<HTMLButtonElement>(null);
  const focusAfter = useRef<"toggle" | "signout" | null>(null);

  useEffect(() => {
    if (focusAfter.current === "toggle") toggle.current?.focus();
    if (focusAfter.current === "signout") signOutButton.current?.focus();
    focusAfter.current = null;
  });

  // The page asks for a credential in its main part instead (ReadsNeedCredential).
  const formElsewhere = auth.readsNeedCredential;

  return (
    <div class="auth">
      <p class="auth-status" role="status">
        {auth.signedIn && auth.who && (
          <>
            Signed in as <strong data-testid="auth-who">{whoLabel(auth.who)}</strong>{" "}
            <span class="role" data-testid="auth-role">
              {auth.who.role}
            </span>
          </>
        )}
        {!auth.signedIn && auth.notice}
      </p>
      {auth.signedIn ? (
        <button
          type="button"
          ref={signOutButton}
          onClick={() => {
            focusAfter.current = "toggle";
            setOpen(false);
            auth.signOut();
          }}
        >
          Sign out
        </button>
      ) : (
        !formElsewhere && (
          <button
            type="button"
            ref={toggle}
            aria-expanded={open}
            aria-controls={open ? "signin-panel" : undefined}
            onClick={() => setOpen(!open)}
          >
            Sign in
          </button>
        )
      )}
      {open && !auth.signedIn && !formElsewhere && (
        <div id="signin-panel" class="signin-panel">
          <SignInForm
            idPrefix="signin"
            onDone={() => {
              focusAfter.current = "signout";
              setOpen(false);
            }}
            onCancel={() => {
              focusAfter.current = "toggle";
              setOpen(false);
            }}
          />
        </div>
      )}
    </div>
  );
}

/** ReadsNeedCredential replaces the views when this Foundry's reads are not public. */
export function ReadsNeedCredential() {
  useEffect(() => {
    document.title = "Sign in · Foundry";
  }, []);
  return (
    <>
      <h1 tabIndex={-1}>Sign in to see this Foundry</h1>
      <p>
        This Foundry does not show its data without a credential (its reads are not public). Sign in with an API token
        (<code>fdt_…</code>, any role), your contributor session token, or the administrator key.
      </p>
      <SignInForm
        idPrefix="gate"
        onDone={() => requestAnimationFrame(() => document.querySelector<HTMLElement>("main h1")?.focus())}
      />
    </>
  );
}
