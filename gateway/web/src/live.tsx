// Live refresh: one clock for the whole page. Every POLL_MS the clock ticks
// and each view reloads what it shows; it stops while the tab is hidden
// (nobody is looking, and a laptop's background tabs should cost nothing)
// and while the reader has paused it (WCAG 2.2.2: content that updates by
// itself can be paused). A view whose data changed says so once, politely,
// through the page's live region; unchanged data announces nothing.

import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";

export const POLL_MS = 5000;

interface Live {
  tick: number;
  paused: boolean;
  setPaused: (p: boolean) => void;
  /** refresh reloads every view's data now. */
  refresh: () => void;
  /** changed notes that the named data changed; announced together. */
  changed: (what: string) => void;
  message: string;
  lastUpdate: Date | null;
  noteUpdate: () => void;
}

const LiveContext = createContext<Live | null>(null);

export function useLiveClock(): Live {
  const live = useContext(LiveContext);
  if (!live) throw new Error("useLiveClock outside LiveProvider");
  return live;
}

export function LiveProvider({ children }: { children: ComponentChildren }) {
  const [tick, setTick] = useState(0);
  const [paused, setPaused] = useState(false);
  const [hidden, setHidden] = useState(document.hidden);
  const [message, setMessage] = useState("");
  const [lastUpdate, setLastUpdate] = useState<Date | null>(null);
  const pending = useRef(new Set<string>());
  const flush = useRef<number | undefined>(undefined);

  useEffect(() => {
    const onVisibility = () => {
      setHidden(document.hidden);
      // Back from the background: what is shown may be old, so reload now.
      if (!document.hidden) setTick((t) => t + 1);
    };
    document.addEventListener("visibilitychange", onVisibility);
    return () => document.removeEventListener("visibilitychange", onVisibility);
  }, []);

  useEffect(() => {
    if (paused || hidden) return undefined;
    const id = window.setInterval(() => setTick((t) => t + 1), POLL_MS);
    return () => window.clearInterval(id);
  }, [paused, hidden]);

  const refresh = useCallback(() => setTick((t) => t + 1), []);
  const noteUpdate = useCallback(() => setLastUpdate(new Date()), []);
  const changed = useCallback((what: string) => {
    pending.current.add(what);
    // Several loads finish within a moment of each other: one sentence.
    window.clearTimeout(flush.current);
    flush.current = window.setTimeout(() => {
      const names = [...pending.current].sort();
      pending.current.clear();
      setMessage(`Updated: ${names.join(", ")}.`);
    }, 400);
  }, []);

  return (
    <LiveContext.Provider
      value={{
        tick,
        paused,
        setPaused: (p) => {
          setPaused(p);
          if (!p) setTick((t) => t + 1);
        },
        refresh,
        changed,
        message,
        lastUpdate,
        noteUpdate,
      }}
    >
      {children}
    </LiveContext.Provider>
  );
}

// VOLATILE fields change on every read (when a report was made, how long
// the oldest task has waited, where a window of the last days starts):
// they are shown or implied, but their change alone is no news worth
// announcing every few seconds.
const VOLATILE = new Set(["generated_at", "longest_pending_seconds", "since"]);

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
}

/**
 * useLive loads data now and on every tick of the live clock. label names
 * the data in announcements ("pipeline status"); key reloads from scratch
 * when it changes (another idea's page).
 */
export function useLive<T>(label: string, key: string, load: (signal: AbortSignal) => Promise<T>): Loaded<T> {
  const live = useLiveClock();
  const [state, setState] = useState<Loaded<T> & { key: string }>({
    data: undefined,
    error: undefined,
    loading: true,
    key,
  });
  const last = useRef<{ key: string; json: string; news: string } | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const ctrl = new AbortController();
    loadRef
      .current(ctrl.signal)
      .then((data) => {
        if (ctrl.signal.aborted) return;
        const json = JSON.stringify(data);
        const news = JSON.stringify(data, (k, v) => (VOLATILE.has(k) ? undefined : v));
        const prev = last.current;
        if (prev && prev.key === key && prev.news !== news) live.changed(label);
        last.current = { key, json, news };
        live.noteUpdate();
        // Unchanged data keeps its object, so nothing re-renders.
        setState((s) =>
          s.key === key && prev?.json === json && !s.error ? s : { data, error: undefined, loading: false, key },
        );
      })
      .catch((err: unknown) => {
        if (ctrl.signal.aborted) return;
        const error = err instanceof Error ? err.message : String(err);
        // Keep what was shown: a failed refresh does not blank the page.
        setState((s) => ({ data: s.key === key ? s.data : undefined, error, loading: false, key }));
      });
    return () => ctrl.abort();
  }, [key, live.tick]);

  if (state.key !== key) return { data: undefined, error: undefined, loading: true };
  return state;
}
