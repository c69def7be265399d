// The dashboard's routes, as URL hashes, and the helpers every view uses
// to link to them and to name the browser tab.

import { useEffect } from "preact/hooks";

export type Route =
  | { view: "portfolio" }
  | { view: "idea"; id: string }
  | { view: "pipeline" }
  | { view: "ledger" }
  | { view: "missing"; hash: string };

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/";
  if (path === "/" || path === "/ideas") return { view: "portfolio" };
  if (path === "/pipeline") return { view: "pipeline" };
  if (path === "/ledger") return { view: "ledger" };
  const idea = /^\/ideas\/([^/]+)$/.exec(path);
  if (idea) {
    try {
      return { view: "idea", id: decodeURIComponent(idea[1]) };
    } catch {
      // A malformed escape names no idea.
    }
  }
  return { view: "missing", hash: path };
}

export const href = {
  portfolio: "#/",
  idea: (id: string) => `#/ideas/${encodeURIComponent(id)}`,
  pipeline: "#/pipeline",
  ledger: "#/ledger",
};

/** useTitle names the browser tab after the view. */
export function useTitle(title: string) {
  useEffect(() => {
    document.title = `${title} · Foundry`;
  }, [title]);
}

