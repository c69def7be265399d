// The agent pipeline: attention flags, the queue by status, execution time
// percentiles and success rates day by day, failure diagnostics, the tasks
// waiting for a retry and the dead letters (which an operator retries or
// cancels), and the task list.

import { useState } from "preact/hooks";
import { useAuth } from "../auth";
import { api, everyOf, type DayMetrics, type Metrics, type TaskItem, type TaskStatus } from "../api";
import { BarChart, LineChart, TIME_STEPS, TREND_DAYS } from "../charts";
import { fmt } from "../format";
import { useLive, useLiveClock } from "../live";
import { useTitle } from "../nav";
import { Facts, Flag, LoadState } from "../ui";

/**
 * STATUSES are the queue's counts, in order, and the task list's filters:
 * every task status the API knows, each a count the pipeline status answers.
 */
const STATUSES = everyOf<TaskStatus>()([
  "pending",
  "running",
  "completed",
  "failed",
  "timed_out",
  "needs_decision",
  "discarded",
  "cancelled",
]);

/** RETRIES_SHOWN is how many dead letters and retrying tasks the page lists. */
const RETRIES_SHOWN = 20;

/** attemptsOf says how far a task is through its attempts. */
function attemptsOf(t: TaskItem): string {
  return `attempt ${t.attempts} of ${t.max_attempts}`;
}

/**
 * RetryList lists tasks that failed (waiting for their retry) or ran out of
 * attempts, with what an operator may do to each: retry it now, or cancel
 * it while it waits.
 */
function RetryList({ id, tasks, empty }: { id: string; tasks: TaskItem[]; empty: string }) {
  const auth = useAuth();
  const live = useLiveClock();
  const [result, setResult] = useState("");
  const act = async (what: string, run: () => Promise<unknown>) => {
    setResult("");
    try {
      await run();
      setResult(`${what}.`);
      live.refresh();
    } catch (err) {
      setResult(`Could not ${what.toLowerCase()}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  // The result stays when the list empties: it says what emptied it.
  return (
    <>
      {tasks.length === 0 && <p class="muted">{empty}</p>}
      {tasks.length > 0 && (
        <ul class="retries" aria-labelledby={id}>
          {tasks.map((t) => (
            <li key={t.id} data-task-id={t.id}>
              <p>
                <span class={`status status-${t.status}`}>{fmt.label(t.status)}</span>{" "}
                <span class="muted">
                  {t.task_type} · {attemptsOf(t)} ·{" "}
                  {t.next_attempt_at ? `next attempt ${fmt.time(t.next_attempt_at)}` : fmt.time(t.updated_at)}
                </span>
              </p>
              <p class="summary">{t.status_reason ?? t.error_summary ?? "No summary recorded."}</p>
              <p class="muted direction">{t.direction}</p>
              {auth.can("tasks") && (
                <p class="buttons">
                  <button type="button" onClick={() => act(`Retried ${t.task_type} task`, () => api.retryTask(t.id))}>
                    Retry now
                  </button>
                  {t.status === "failed" && t.next_attempt_at && (
                    <button
                      type="button"
                      onClick={() => act(`Cancelled ${t.task_type} task`, () => api.cancelTask(t.id, ""))}
                    >
                      Cancel
                    </button>
                  )}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
      <p role="status" class="result">
        {result}
      </p>
    </>
  );
}

const FLAGS = [
  { key: "stuck", yes: "Stuck: tasks wait and none runs", no: "Not stuck" },
  { key: "repeated_failures", yes: "Repeated failures: the last tasks all failed", no: "No failure streak" },
  { key: "low_success_rate", yes: "Low success rate", no: "Success rate fine" },
] as const;

/**
 * DailyCharts are the execution time and the success rate of each of the
 * last TREND_DAYS days; a day when no task finished has neither.
 */
function DailyCharts({ days }: { days: DayMetrics[] }) {
  const dates = days.map((d) => d.day);
  const anyFinished = days.some((d) => d.success_rate != null);
  return (
    <>
      <LineChart
        id="chart-percentiles"
        title={`Execution time per day, P50 and P95, last ${TREND_DAYS} days`}
        days={dates}
        series={[
          { name: "P50", values: days.map((d) => d.p50_seconds) },
          { name: "P95", values: days.map((d) => d.p95_seconds) },
        ]}
        format={fmt.seconds}
        steps={TIME_STEPS}
        empty={
          anyFinished
            ? `No finished task was timed in the last ${TREND_DAYS} days.`
            : `No tasks finished in the last ${TREND_DAYS} days.`
        }
      />
      <LineChart
        id="chart-daily-success"
        title={`Success rate per day, last ${TREND_DAYS} days`}
        days={dates}
        series={[{ name: "Success rate", values: days.map((d) => d.success_rate) }]}
        format={fmt.pct}
        max={1}
        empty={`No tasks finished in the last ${TREND_DAYS} days.`}
        columns={[
          { name: "Completed", values: days.map((d) => fmt.num(d.completed)) },
          { name: "Failed", values: days.map((d) => fmt.num(d.failed)) },
          { name: "Timed out", values: days.map((d) => fmt.num(d.timed_out)) },
          { name: "Created", values: days.map((d) => fmt.num(d.created)) },
        ]}
      />
    </>
  );
}

function weekSummary(week: Metrics) {
  const time = week.execution_time;
  const overall = week.success_rate?.overall;
  const timed =
    time && time.sample_count > 0
      ? `${time.sample_count} timed tasks (${time.exact ? "exact" : "from the duration histogram"})`
      : "no timed task";
  // With nothing finished the API's rate is 0, which is no rate at all.
  const finished = overall ? overall.completed + overall.failed : 0;
  const success = overall && finished > 0 ? `success ${fmt.pct(overall.rate)} of ${finished} finished` : "no task finished";
  return `Last 7 days: ${timed}; ${success}.`;
}

/**
 * UsageSummary is what the last 7 days' finished tasks reported spending,
 * in all and by model; a task that reported nothing is counted in neither.
 */
function UsageSummary({ usage }: { usage: NonNullable<Metrics["usage"]> }) {
  const models = Object.entries(usage.usage_by_model ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <Facts
        items={[
          ["Tasks with usage, last 7 days", fmt.num(usage.tasks_with_usage)],
          ["Tokens in", fmt.num(usage.tokens_in)],
          ["Tokens out", fmt.num(usage.tokens_out)],
          ["Cost", fmt.usd(usage.cost_usd)],
        ]}
      />
      {models.length === 0 ? (
        <p class="muted">No task reported tokens or cost in the last 7 days.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="usage-caption" tabIndex={0}>
          <table class="usage" data-testid="usage-by-model">
            <caption id="usage-caption">Usage by model, last 7 days</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Tasks</th>
                <th scope="col">Tokens in</th>
                <th scope="col">Tokens out</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {models.map(([model, u]) => (
                <tr key={model}>
                  <th scope="row">{model}</th>
                  <td>{fmt.num(u.tasks)}</td>
                  <td>{fmt.num(u.tokens_in)}</td>
                  <td>{fmt.num(u.tokens_out)}</td>
                  <td>{fmt.usd(u.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function PipelineView() {
  useTitle("Pipeline");
  const [filter, setFilter] = useState<TaskStatus | "">("");
  const status = useLive("pipeline status", "status", api.pipelineStatus);
  const daily = useLive("daily metrics", "daily", (s) => api.dailyMetrics(TREND_DAYS, s));
  const metrics = useLive("metrics", "metrics", (s) => api.metrics(7, s));
  const diag = useLive("diagnostics", "diag", api.diagnostics);
  const tasks = useLive("tasks", `tasks:${filter}`, (s) => api.tasks(filter || undefined, 50, s));
  const failed = useLive("failed tasks", "failed", (s) => api.tasks("failed", 20, s));
  const discarded = useLive("discarded tasks", "discarded", (s) => api.tasks("discarded", RETRIES_SHOWN, s));
  const auth = useAuth();
  const live = useLiveClock();
  const [bulk, setBulk] = useState("");
  const retryAll = async () => {
    setBulk("");
    try {
      const r = await api.retryTasks("discarded", RETRIES_SHOWN);
      setBulk(`Retried ${r.retried.length}; skipped ${r.skipped.length}.`);
      live.refresh();
    } catch (err) {
      setBulk(`Could not retry: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const st = status.data;
  const attention = st?.attention;
  const week = metrics.data;

  return (
    <>
      <h1 tabIndex={-1}>Pipeline</h1>

      <section aria-labelledby="attention-h">
        <h2 id="attention-h">Attention</h2>
        <LoadState of={status} what="the pipeline status" />
        {st && (
          <>
            {attention && (
              <ul class="flags" data-testid="attention-flags">
                {FLAGS.map((f) => (
                  <li key={f.key}>
                    <Flag on={attention[f.key]} yes={f.yes} no={f.no} />
                  </li>
                ))}
              </ul>
            )}
            <Facts
              items={[
                ...STATUSES.map((s): [string, string] => [fmt.label(s), fmt.num(st[s])]),
                ["Total", fmt.num(st.total)],
                ["Longest wait", fmt.seconds(st.longest_pending_seconds)],
                ["Success rate", fmt.pct(st.success_rate)],
              ]}
            />
          </>
        )}
      </section>

      <section aria-labelledby="metrics-h">
        <h2 id="metrics-h">Execution time and success</h2>
        <LoadState of={daily} what="the daily metrics" />
        <LoadState of={metrics} what="the metrics" />
        <div class="charts">
          {daily.data && <DailyCharts days={daily.data.days} />}
          {week && (
            <>
              <BarChart
                id="chart-success"
                title="Success rate by task type, last 7 days"
                max={1}
                format={fmt.pct}
                empty="No tasks finished in the last 7 days."
                groups={Object.entries(week.success_rate?.by_task_type ?? {})
                  .sort(([a], [b]) => a.localeCompare(b))
                  .map(([type, b]) => ({ label: type, bars: [{ name: "success", value: b.rate }] }))}
              />
              <p class="muted">{weekSummary(week)}</p>
            </>
          )}
        </div>
      </section>

      <section aria-labelledby="usage-h">
        <h2 id="usage-h">Usage</h2>
        {week?.usage && <UsageSummary usage={week.usage} />}
        {daily.data && (
          <div class="charts">
            <LineChart
              id="chart-daily-cost"
              title={`Cost per day, last ${TREND_DAYS} days`}
              days={daily.data.days.map((d) => d.day)}
              // A day no task reported usage on has no cost, not a cost of 0.
              series={[
                {
                  name: "Cost",
                  values: daily.data.days.map((d) => (d.tokens_in + d.tokens_out > 0 || d.cost_usd > 0 ? d.cost_usd : null)),
                },
              ]}
              format={fmt.usd}
              empty={`No task reported usage in the last ${TREND_DAYS} days.`}
              columns={[
                { name: "Tokens in", values: daily.data.days.map((d) => fmt.num(d.tokens_in)) },
                { name: "Tokens out", values: daily.data.days.map((d) => fmt.num(d.tokens_out)) },
              ]}
            />
          </div>
        )}
      </section>

      <section aria-labelledby="diag-h">
        <h2 id="diag-h">Failure diagnostics</h2>
        <LoadState of={diag} what="the diagnostics completeness" />
        {diag.data && (
          <>
            <Facts
              items={[
                ["Failed tasks", fmt.num(diag.data.total_failed)],
                ["With diagnostics", fmt.num(diag.data.with_diagnostics)],
                ["Missing diagnostics", `${fmt.num(diag.data.missing_pct)} %`],
              ]}
            />
            <BarChart
              id="chart-categories"
              title="Failed tasks by error category"
              format={(v) => fmt.num(v)}
              empty="No failed tasks."
              // Every category is listed, at 0 too: with no failure at all that is no chart.
              groups={
                diag.data.total_failed === 0
                  ? []
                  : Object.entries(diag.data.by_category)
                      .sort(([a], [b]) => a.localeCompare(b))
                      .map(([c, n]) => ({ label: fmt.label(c), bars: [{ name: "failed", value: n }] }))
              }
            />
          </>
        )}
        <h3 id="failed-h">Latest failed tasks</h3>
        <LoadState of={failed} what="the failed tasks" />
        {failed.data && failed.data.tasks.length === 0 && <p class="muted">No failed task.</p>}
        {failed.data && failed.data.tasks.length > 0 && (
          <ul class="failures" aria-labelledby="failed-h">
            {failed.data.tasks.map((t) => (
              <li key={t.id} data-task-id={t.id}>
                <p>
                  <span class="category">{t.error_category ?? "uncategorised"}</span>{" "}
                  <span class="muted">
                    {t.task_type} · {fmt.time(t.updated_at)}
                  </span>
                </p>
                <p class="summary">{t.error_summary ?? "No summary recorded."}</p>
                <p class="muted direction">{t.direction}</p>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="retries-h">
        <h2 id="retries-h">Retries and dead letters</h2>
        <p class="muted">
          A failed attempt with attempts left is retried after its task type's backoff; the last attempt's failure
          discards the task until an operator retries it.
        </p>
        <h3 id="retrying-h">Waiting for a retry</h3>
        <LoadState of={failed} what="the failed tasks" />
        {failed.data && (
          <RetryList
            id="retrying-h"
            tasks={failed.data.tasks.filter((t) => t.next_attempt_at)}
            empty="No task waits for a retry."
          />
        )}
        <h3 id="discarded-h">Discarded</h3>
        <LoadState of={discarded} what="the discarded tasks" />
        {discarded.data && (
          <>
            <RetryList id="discarded-h" tasks={discarded.data.tasks} empty="No task was discarded." />
            {auth.can("tasks") && discarded.data.tasks.length > 1 && (
              <div class="action">
                <button type="button" onClick={retryAll}>
                  Retry the {discarded.data.tasks.length} shown
                </button>
                <p role="status" class="result">
                  {bulk}
                </p>
              </div>
            )}
          </>
        )}
      </section>

      <section aria-labelledby="tasks-h">
        <h2 id="tasks-h">Tasks</h2>
        <div class="toolbar">
          <label for="status-filter">Status</label>
          <select
            id="status-filter"
            value={filter}
            onChange={(e) => {
              const v = e.currentTarget.value;
              setFilter(STATUSES.find((s) => s === v) ?? "");
            }}
          >
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {fmt.label(s)}
              </option>
            ))}
          </select>
        </div>
        <LoadState of={tasks} what="the tasks" />
        {tasks.data && tasks.data.tasks.length === 0 && <p class="muted">No tasks.</p>}
        {tasks.data && tasks.data.tasks.length > 0 && (
          <div class="table-wrap" role="region" aria-labelledby="tasks-caption" tabIndex={0}>
            <table class="tasks">
              <caption id="tasks-caption">
                The latest {tasks.data.tasks.length}
                {tasks.data.pagination ? ` of ${tasks.data.pagination.total}` : ""} tasks
                {filter ? ` (${fmt.label(filter)})` : ""},
                newest first
              </caption>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Direction</th>
                  <th scope="col">Executor</th>
                  <th scope="col">Error category</th>
                  <th scope="col">Error summary</th>
                </tr>
              </thead>
              <tbody>
                {tasks.data.tasks.map((t) => (
                  <tr key={t.id} data-task-id={t.id}>
                    <td>{fmt.time(t.created_at)}</td>
                    <td>{t.task_type}</td>
                    <td>
                      <span class={`status status-${t.status}`}>{fmt.label(t.status)}</span>
                    </td>
                    <td>
                      {t.attempts} of {t.max_attempts}
                    </td>
                    <td class="direction">{t.direction}</td>
                    <td>{t.executor ? `${t.executor} (${t.model})` : "—"}</td>
                    <td>{t.error_category ?? "—"}</td>
                    <td>{t.error_summary ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
