import { useEffect, useState, type FormEvent } from 'react';
import { api, ApiFailure, holdSession, whenSessionRead, whenSignedOut, type Session } from './api.ts';
import { BusyButton, Field, Problem } from './ui.tsx';
import { PAGES, type PageKey } from './pages/index.tsx';
import { Overview } from './pages/Overview.tsx';

const route = (): PageKey => {
  const key = window.location.hash.replace(/^#\/?/, '').split('?')[0] as PageKey;
  return PAGES.some((p) => p.key === key) ? key : 'overview';
};

function SignIn({ onSignedIn, notice }: { onSignedIn: (s: Session) => void; notice?: string | undefined }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [mfa, setMfa] = useState('');
  const [needMfa, setNeedMfa] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      const s = await api<Session>('POST', '/console/session', { email, password, ...(needMfa && mfa ? { mfa_code: mfa } : {}) });
      onSignedIn(s);
    } catch (err) {
      const msg = err instanceof ApiFailure ? err.message : String(err);
      if (msg.startsWith('MFA code required')) setNeedMfa(true);
      setError(msg);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin" id="main">
      <form onSubmit={(e) => void submit(e)} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to the console</h1>
        {notice ? (
          <p className="notice" role="status">
            {notice}
          </p>
        ) : null}
        <Field label="Email" type="email" value={email} onChange={setEmail} required autoComplete="username" />
        <Field label="Password" type="password" value={password} onChange={setPassword} required autoComplete="current-password" />
        {needMfa ? <Field label="One-time code" value={mfa} onChange={setMfa} autoComplete="one-time-code" hint="6 digits from your authenticator app" /> : null}
        <Problem error={error} />
        {/* Not disabled while busy (BusyButton): a wrong password would send the keyboard focus to the page's start. */}
        <BusyButton type="submit" className="primary" busy={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </BusyButton>
      </form>
    </main>
  );
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [page, setPage] = useState<PageKey>(route());
  /** Why the sign-in form shows, when it is not the first visit (the session ended elsewhere). */
  const [notice, setNotice] = useState<string>();
  /** The session could not be read (the service unreachable): not the same as signed out. */
  const [unreachable, setUnreachable] = useState<string>();
  const [signOutError, setSignOutError] = useState<string>();

  const readSession = () => {
    setUnreachable(undefined);
    api<Session>('GET', '/console/session').then(
      (s) => {
        holdSession(s);
        setSession(s);
      },
      (e: unknown) => {
        if (e instanceof ApiFailure && e.status === 401) setSession(null);
        else setUnreachable(e instanceof Error ? e.message : String(e));
      },
    );
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, at load.
  useEffect(() => {
    whenSignedOut((reason) => {
      setNotice(reason ?? 'Your session has ended (signed out, or expired): sign in again. What you were typing was not sent.');
      setSession(null);
    });
    // The same user's session read again (signed in anew in another tab): with another role the
    // pages show that role's controls; with the same one nothing changes on screen (focus stays:
    // a new session would move it to the page's heading).
    whenSessionRead((s) => {
      holdSession(s);
      setSession((shown) => (shown && shown.email === s.email && shown.tenant === s.tenant && shown.role === s.role ? shown : s));
    });
    readSession();
    const onHash = () => setPage(route());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the title and focus follow the page, and the session (signing in shows the page anew).
  useEffect(() => {
    const current = PAGES.find((p) => p.key === page);
    document.title = `${current?.title ?? 'Console'} · RecSearch console`;
    // Keyboard and screen-reader users land on the new page's heading.
    document.getElementById('page-title')?.focus();
  }, [page, session]);

  if (session === undefined)
    return unreachable ? (
      <main className="signin" id="main">
        <Problem error={`The console could not read your session: ${unreachable}`} />
        <button type="button" onClick={readSession}>
          Try again
        </button>
      </main>
    ) : (
      <p role="status">Loading…</p>
    );
  if (session === null)
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          holdSession(s);
          setNotice(undefined);
          setSession(s);
        }}
      />
    );

  const Page = PAGES.find((p) => p.key === page)?.component ?? Overview;
  const signOut = async () => {
    setSignOutError(undefined);
    let ended = false;
    try {
      await api('DELETE', '/console/session');
    } catch (e) {
      // Ended already (401): signed out. Anything else: the session may still stand, so say so and stay.
      if (!(e instanceof ApiFailure && e.status === 401)) {
        setSignOutError(`Not signed out: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      ended = true;
    }
    holdSession(null);
    // A 401 keeps what `api` said of it: another user signed in in another tab (whose session this
    // tab does not end) is said, not wiped into a plain sign-in form (until 2026-12-05).
    if (!ended) setNotice(undefined);
    setSession(null);
  };
  return (
    <div className="layout">
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link to #main by convention; the handler only moves focus to the page's heading as well. */}
      <a
        className="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('page-title')?.focus();
        }}
      >
        Skip to content
      </a>
      <nav aria-label="Console sections" className="sidebar">
        <p className="brand">RecSearch</p>
        <ul>
          {PAGES.map((p) => (
            <li key={p.key}>
              <a href={`#/${p.key}`} aria-current={p.key === page ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
        <div className="who">
          <p>
            {session.email}
            <br />
            <span className="muted">
              tenant {session.tenant} · {session.role}
            </span>
          </p>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
          <Problem error={signOutError} />
        </div>
      </nav>
      <main id="main" className="content">
        <Page session={session} />
      </main>
    </div>
  );
}
