// The page: a header with the navigation and the live-refresh controls,
// one view chosen by the URL's hash, and the live region that announces
// refreshed data. Routing is by hash (#/ideas/<id>) so the gateway serves
// one index.html and never needs to know the dashboard's routes.

import { useEffect, useRef, useState } from "preact/hooks";
import { AuthControls, AuthProvider, ReadsNeedCredential, useAuth } from "./auth";
import { LiveProvider, useLiveClock } from "./live";
import { href, parseHash, useTitle, type Route } from "./nav";
import { IdeaView } from "./views/idea";
import { LedgerView } from "./views/ledger";
import { PipelineView } from "./views/pipeline";
import { PortfolioView } from "./views/portfolio";

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseHash(location.hash));
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  return route;
}

const NAV = [
  { view: "portfolio", label: "Portfolio", href: href.portfolio },
  { view: "pipeline", label: "Pipeline", href: href.pipeline },
  { view: "ledger", label: "Ledger", href: href.ledger },
] as const;

function LiveControls() {
  const live = useLiveClock();
  return (
    <div class="live-controls">
      <p class="updated">
        {live.paused ? "Live updates paused" : "Live"}
        {live.lastUpdate && (
          <>
            {" · updated "}
            <time dateTime={live.lastUpdate.toISOString()}>{live.lastUpdate.toLocaleTimeString()}</time>
          </>
        )}
      </p>
      <button type="button" aria-pressed={live.paused} onClick={() => live.setPaused(!live.paused)}>
        {live.paused ? "Resume live updates" : "Pause live updates"}
      </button>
      <button type="button" onClick={live.refresh}>
        Refresh now
      </button>
    </div>
  );
}

function Announcer() {
  const live = useLiveClock();
  return (
    <div id="announcer" class="visually-hidden" role="status" aria-live="polite" aria-atomic="true">
      {live.message}
    </div>
  );
}

function Shell() {
  const route = useRoute();
  const auth = useAuth();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const section = route.view === "idea" ? "portfolio" : route.view;

  // On navigation, focus moves to the new view's heading (as a full page
  // load would put a screen reader at the top), but not on the first load.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    window.scrollTo(0, 0);
    const focusHeading = () => main.current?.querySelector<HTMLElement>("h1")?.focus();
    requestAnimationFrame(focusHeading);
  }, [route.view, route.view === "idea" ? route.id : ""]);

  return (
    <>
      <a class="skip-link" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <header class="site-header">
        <a class="brand" href={href.portfolio}>
          Foundry
        </a>
        <nav aria-label="Dashboard">
          <ul>
            {NAV.map((n) => (
              <li key={n.view}>
                <a href={n.href} aria-current={section === n.view ? "page" : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="header-tools">
          <LiveControls />
          <AuthControls />
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {/* The views wait for whoami: with reads not public, they would only fail. */}
        {!auth.ready ? (
          <p class="muted">Loading…</p>
        ) : auth.readsNeedCredential ? (
          <ReadsNeedCredential />
        ) : (
          <>
            {route.view === "portfolio" && <PortfolioView />}
            {route.view === "idea" && <IdeaView id={route.id} />}
            {route.view === "pipeline" && <PipelineView />}
            {route.view === "ledger" && <LedgerView />}
            {route.view === "missing" && <Missing hash={route.hash} />}
          </>
        )}
      </main>
      <footer class="site-footer">
        <p>
          Data from the <a href="/api/docs/">REST API</a>. Read-only until you sign in; then the page shows the
          actions your role may take.
        </p>
      </footer>
      <Announcer />
    </>
  );
}

function Missing({ hash }: { hash: string }) {
  useTitle("Not found");
  return (
    <>
      <h1 tabIndex={-1}>Nothing here</h1>
      <p>
        The dashboard has no page <code>{hash}</code>. Go to the <a href={href.portfolio}>portfolio</a>.
      </p>
    </>
  );
}

export function App() {
  return (
    <LiveProvider>
      <AuthProvider>
        <Shell />
      </AuthProvider>
    </LiveProvider>
  );
}
