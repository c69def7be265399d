// Pieces every view uses: a load's error and waiting states, a stage
// badge, and a facts list.

import type { ComponentChildren } from "preact";
import type { Loaded } from "./live";

/**
 * LoadState shows why a part of the page has no data: still loading, or
 * the request failed (kept beside old data, which stays on screen).
 */
export function LoadState<T>({ of, what }: { of: Loaded<T>; what: string }) {
  if (of.error) {
    return (
      <p class="error" role="alert">
        Could not load {what}: {of.error}. Retrying with the next update.
      </p>
    );
  }
  if (of.loading && of.data === undefined) return <p class="muted">Loading {what}…</p>;
  return null;
}

export function StageBadge({ stage }: { stage: string }) {
  return <span class={`stage stage-${stage}`}>{stage}</span>;
}

/** Flag shows a yes/no condition in words and in colour. */
export function Flag({ on, yes, no }: { on: boolean; yes: string; no: string }) {
  return <span class={on ? "flag flag-on" : "flag flag-off"}>{on ? yes : no}</span>;
}

export function Facts({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
