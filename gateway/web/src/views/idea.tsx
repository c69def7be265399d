// One idea: where it stands, the Advance action (shown to operators and
// administrators only: src/auth.tsx), its stakes, its open questions, its
// tasks (listed by idea: GET /api/agent/tasks?idea_id=) and every change of
// its stage as the API recorded it (GET /api/ideas/{id}/stages).

import { useState } from "preact/hooks";
import { ApiError, api, STAGES, type StageChange } from "../api";
import { useAuth } from "../auth";
import { fmt } from "../format";
import { useLive, useLiveClock } from "../live";
import { href, useTitle } from "../nav";
import { usePeople, type People } from "../people";
import { Facts, LoadState, StageBadge } from "../ui";
import { signalText } from "./portfolio";

/** IDEA_TASKS is how many of an idea's tasks the page shows, newest first. */
export const IDEA_TASKS = 100;
/** STAGES_SHOWN is how many changes of the stage history the page reads: the most one page holds. */
const STAGES_SHOWN = 500;
/** IMPACT_SHOWN is how many of an idea's impact records the page lists, newest first (the totals are of all). */
const IMPACT_SHOWN = 20;

/** AUDIT_SCANNED is how many of the latest audit entries are searched for its stakes. */
export const AUDIT_SCANNED = 500;

async function stakesOfIdea(id: string, signal: AbortSignal) {
  const page = await api.audit(AUDIT_SCANNED, signal);
  return page.entries.filter((e) => e.attrs["idea_id"] === id);
}

/**
 * REASONS say why a stage changed, in words; a reason the page does not
 * know yet shows as the API spells it.
 */
const REASONS: Record<StageChange["reason"], string> = {
  created: "created at this stage",
  advance: "advanced",
  operator: "stage set explicitly",
  update: "edited",
  task: "a task completed",
  migrated: "recorded when the history began",
};

/**
 * By says who changed a stage, from the API's "admin", "token:<id>",
 * "task:<id>", "split:<idea>" or contributor id (named by the handle the
 * change carries, else by the contributors list's).
 */
function By({ by, handle, people }: { by: string; handle: string | null; people: People }) {
  if (by === "admin") return <>the administrator</>;
  const colon = by.indexOf(":");
  const [kind, rest] = colon < 0 ? ["", by] : [by.slice(0, colon), by.slice(colon + 1)];
  if (kind === "token") return <>API token {rest}</>;
  if (kind === "task") return <>task {rest}</>;
  if (kind === "split") {
    return (
      <>
        split from <a href={href.idea(rest)}>{rest}</a>
      </>
    );
  }
  return <>contributor {handle ?? people.name(by)}</>;
}

/**
 * timeBefore is how long the idea stayed in the stage a change left. The
 * first record of an idea that predates the history is when the history
 * began, not when it entered that stage: the time after it is a lower bound.
 */
function timeBefore(changes: StageChange[], i: number): string {
  const prev = changes[i - 1];
  if (!prev) return "—";
  const seconds = (Date.parse(changes[i].at) - Date.parse(prev.at)) / 1000;
  if (!Number.isFinite(seconds)) return "—";
  return `${prev.reason === "migrated" ? "at least " : ""}${fmt.duration(seconds)} in ${prev.to}`;
}

function StageHistory({ changes, people }: { changes: StageChange[]; people: People }) {
  if (changes.length === 0) return <p class="muted">No stage change recorded.</p>;
  return (
    <div class="table-wrap" role="region" aria-labelledby="stages-caption" tabIndex={0}>
      <table class="stage-history">
        <caption id="stages-caption">Every change of this idea's stage, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col">Why</th>
            <th scope="col">By</th>
            <th scope="col">Time in the stage before</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c, i) => (
            <tr key={`${c.at}-${i}`}>
              <td>
                <time dateTime={c.at}>{fmt.time(c.at)}</time>
              </td>
              <td>{c.from ? <StageBadge stage={c.from} /> : "—"}</td>
              <td>
                <StageBadge stage={c.to} />
              </td>
              <td>{REASONS[c.reason] ?? fmt.label(c.reason)}</td>
              <td>
                <By by={c.by} handle={c.by_handle} people={people} />
              </td>
              <td>{timeBefore(changes, i)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AdvanceButton({ id, stage, name }: { id: string; stage: string; name: string }) {
  const live = useLiveClock();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState("");
  const complete = stage === "complete";

  const advance = async () => {
    setBusy(true);
    setResult("");
    try {
      const idea = await api.advance(id);
      setResult(`Advanced to ${idea.stage}.`);
      live.refresh();
    } catch (err) {
      setResult(
        err instanceof ApiError && err.status === 409
          ? "Already complete: there is no next stage."
          : `Could not advance: ${err instanceof Error ? err.message : String(err)}`,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="action">
      <button
        type="button"
        class="primary"
        onClick={advance}
        disabled={busy || complete}
        aria-describedby="advance-help"
      >
        {busy ? "Advancing…" : "Advance"}
      </button>
      <p id="advance-help" class="muted">
        {complete
          ? `${name} is complete.`
          : `Moves ${name} one stage, from ${stage} to ${STAGES[STAGES.indexOf(stage as never) + 1] ?? "the next"}.`}
      </p>
      <p role="status" class="result">
        {result}
      </p>
    </div>
  );
}

export function IdeaView({ id }: { id: string }) {
  const idea = useLive("idea", id, (s) => api.idea(id, s));
  const questions = useLive("questions", id, (s) => api.questions(id, s));
  const preview = useLive("stakes", id, (s) => api.investPreview(id, s));
  const impact = useLive("impact", id, (s) => api.impact(id, IMPACT_SHOWN, s));
  const stakes = useLive("stake movements", id, (s) => stakesOfIdea(id, s));
  const tasks = useLive("tasks", id, (s) => api.ideaTasks(id, IDEA_TASKS, s));
  const stages = useLive("stage history", id, (s) => api.stages(id, STAGES_SHOWN, s));
  const sizing = useLive("right-sizing", "sizing", api.rightSizing);
  const people = usePeople();
  const auth = useAuth();
  const d = idea.data;
  useTitle(d ? d.name : "Idea");

  if (!d) {
    const missing = idea.error?.startsWith("404");
    return (
      <>
        <h1 tabIndex={-1}>{missing ? "No such idea" : "Idea"}</h1>
        {missing ? (
          <p>
            There is no idea <code>{id}</code>. Back to the <a href={href.portfolio}>portfolio</a>.
          </p>
        ) : (
          <LoadState of={idea} what="the idea" />
        )}
      </>
    );
  }

  const signals = sizing.data?.signals.find((s) => s.idea_id === id);
  const current = STAGES.indexOf(d.stage);
  return (
    <>
      <p class="crumbs">
        <a href={href.portfolio}>Portfolio</a> › <span aria-current="page">{d.name}</span>
      </p>
      <h1 tabIndex={-1}>{d.name}</h1>
      <LoadState of={idea} what="the idea" />
      {d.archived && <p class="warning">Archived: merged into another idea.</p>}

      <section aria-labelledby="stage-h">
        <h2 id="stage-h">
          Stage: <span data-testid="idea-stage">{d.stage}</span>
        </h2>
        <ol class="stepper">
          {STAGES.map((s, i) => (
            <li
              key={s}
              class={i < current ? "done" : i === current ? "current" : ""}
              aria-current={i === current ? "step" : undefined}
            >
              {s}
              <span class="visually-hidden">{i < current ? " (done)" : i === current ? " (current)" : ""}</span>
            </li>
          ))}
        </ol>
        {auth.can("advance") ? (
          <AdvanceButton id={id} stage={d.stage} name={d.name} />
        ) : (
          <p class="muted" data-testid="advance-hint">
            {auth.signedIn
              ? `Moving an idea to its next stage needs an operator or the administrator (you are signed in as ${auth.who?.role ?? "an unverified credential"}).`
              : "Sign in as an operator or the administrator to move this idea to its next stage."}
          </p>
        )}
      </section>

      <section aria-labelledby="facts-h">
        <h2 id="facts-h">Facts</h2>
        {d.description && <p class="description">{d.description}</p>}
        <Facts
          items={[
            ["Score", fmt.score(d.score)],
            ["Potential value", fmt.num(d.potential_value)],
            ["Estimated cost", fmt.num(d.estimated_cost)],
            ["Actual value", fmt.num(d.actual_value)],
            ["Actual cost", fmt.num(d.actual_cost)],
            ["Confidence", fmt.pct(d.confidence)],
            ["Resistance risk", fmt.num(d.resistance_risk)],
            ["Manifestation", d.manifestation_status],
            ["Tags", d.tags.length ? d.tags.join(", ") : "none"],
            ["Right-sizing", signalText(signals) || "healthy"],
            ["Split from", d.parent_idea_id ? <a href={href.idea(d.parent_idea_id)}>{d.parent_idea_id}</a> : "—"],
            ["Id", <code>{d.id}</code>],
          ]}
        />
      </section>

      <section aria-labelledby="impact-h">
        <h2 id="impact-h">Impact</h2>
        <LoadState of={impact} what="the impact records" />
        {impact.data && impact.data.totals && (
          <Facts
            items={[
              [
                "Usage",
                impact.data.totals.usage.length
                  ? impact.data.totals.usage.map((u) => `${fmt.num(u.quantity)} ${u.unit}`).join(", ")
                  : "none recorded",
              ],
              ["Attribution earned", `${fmt.num(impact.data.totals.earned_cc)} CC`],
              ["Revenue", `${fmt.num(impact.data.totals.revenue_usd)} USD`],
              ["Paid to stakers", `${fmt.num(impact.data.totals.paid_cc)} CC`],
            ]}
          />
        )}
        {impact.data && impact.data.records.length > 0 && (
          <div class="table-wrap" role="region" aria-labelledby="impact-caption" tabIndex={0}>
            <table data-testid="impact-records">
              <caption id="impact-caption">The latest {IMPACT_SHOWN} impact records</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Kind</th>
                  <th scope="col" class="num">
                    Amount
                  </th>
                  <th scope="col">Evidence</th>
                </tr>
              </thead>
              <tbody>
                {impact.data.records.map((r) => (
                  <tr key={r.id}>
                    <td>{fmt.time(r.created_at)}</td>
                    <td>{fmt.label(r.kind)}</td>
                    <td class="num">
                      {r.kind === "revenue" ? `${fmt.num(r.amount_usd)} USD` : `${fmt.num(r.quantity)} ${r.unit}`}
                    </td>
                    <td>{r.evidence}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="stakes-h">
        <h2 id="stakes-h">Stakes</h2>
        <LoadState of={preview} what="the stakes" />
        {preview.data && (
          <Facts
            items={[
              ["Staked", `${fmt.num(preview.data.total_cc_staked)} CC`],
              ["Stakers", fmt.num(preview.data.staker_count)],
              [
                "Projection",
                preview.data.projections
                  ? `${fmt.num(preview.data.projections.low_multiplier)}× – ${fmt.num(preview.data.projections.high_multiplier)}×`
                  : "—",
              ],
              ["Value unlocked by stage", `${fmt.num(preview.data.stage_unlock_pct)} %`],
            ]}
          />
        )}
        <LoadState of={stakes} what="the stake movements" />
        {stakes.data && stakes.data.length > 0 && (
          <div class="table-wrap" role="region" aria-labelledby="moves-caption" tabIndex={0}>
            <table>
              <caption id="moves-caption">Stake movements (from the latest {AUDIT_SCANNED} audit entries)</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Movement</th>
                  <th scope="col">Contributor</th>
                  <th scope="col" class="num">
                    CC
                  </th>
                </tr>
              </thead>
              <tbody>
                {stakes.data.map((e) => (
                  <tr key={e.seq}>
                    <td>{fmt.time(e.created_at)}</td>
                    <td>{fmt.label(e.kind)}</td>
                    <td>{people.name(e.subject)}</td>
                    <td class="num">{fmt.num(e.amount)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {stakes.data && stakes.data.length === 0 && <p class="muted">No stake movements among the latest audit entries.</p>}
      </section>

      <section aria-labelledby="tasks-h">
        <h2 id="tasks-h">Tasks</h2>
        <LoadState of={tasks} what="the tasks" />
        {tasks.data?.pagination?.has_more && (
          <p class="muted">
            The latest {tasks.data.tasks.length} of this idea's {tasks.data.pagination.total} tasks.
          </p>
        )}
        {tasks.data && tasks.data.tasks.length === 0 && <p>No tasks for this idea.</p>}
        {tasks.data && tasks.data.tasks.length > 0 && (
          <div class="table-wrap" role="region" aria-labelledby="idea-tasks-caption" tabIndex={0}>
            <table>
              <caption id="idea-tasks-caption">Tasks of this idea, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Direction</th>
                  <th scope="col">Diagnosis</th>
                </tr>
              </thead>
              <tbody>
                {tasks.data.tasks.map((t) => (
                  <tr key={t.id}>
                    <td>{fmt.time(t.created_at)}</td>
                    <td>{t.task_type}</td>
                    <td>
                      <span class={`status status-${t.status}`}>{fmt.label(t.status)}</span>
                    </td>
                    <td class="direction">{t.direction}</td>
                    <td>{t.error_category ? `${t.error_category}: ${t.error_summary ?? ""}` : "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="questions-h">
        <h2 id="questions-h">Open questions</h2>
        <LoadState of={questions} what="the questions" />
        {questions.data &&
          (questions.data.questions.length === 0 ? (
            <p class="muted">No questions.</p>
          ) : (
            <ol class="questions">
              {questions.data.questions.map((q) => (
                <li key={q.id}>
                  {q.question} <span class="muted">({q.status}, {fmt.time(q.created_at)})</span>
                </li>
              ))}
            </ol>
          ))}
      </section>

      <section aria-labelledby="history-h">
        <h2 id="history-h">Stage history</h2>
        <LoadState of={stages} what="the stage history" />
        {stages.data?.pagination?.has_more && (
          <p class="muted">
            The first {stages.data.changes.length} of this idea's {stages.data.pagination.total} stage changes.
          </p>
        )}
        {stages.data && <StageHistory changes={stages.data.changes} people={people} />}
      </section>
    </>
  );
}
