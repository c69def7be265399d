// The portfolio: every active idea ranked by score, the stage funnel with
// the median time in each stage, the same ideas in one column per stage,
// and the right-sizing report's health and suggestions.

import { api, STAGES, type Idea, type IdeaSignals, type Progress, type StageTimes } from "../api";
import { BarChart } from "../charts";
import { fmt } from "../format";
import { useLive } from "../live";
import { href, useTitle } from "../nav";
import { Facts, LoadState, StageBadge } from "../ui";

export function signalText(s: IdeaSignals | undefined): string {
  if (!s) return "";
  const out: string[] = [];
  if (s.too_large) out.push("too large");
  if (s.too_small) out.push("too small");
  if (s.overlap) out.push("overlaps");
  return out.join(", ");
}

/**
 * funnelGroups count, for each stage, the active ideas at it or past it
 * (the funnel) and at it, from the current stages alone: an idea created
 * at a later stage, or set there, counts as past the stages it skipped.
 * None when there is no active idea.
 */
function funnelGroups(p: Progress) {
  if (p.total_ideas === 0) return [];
  const at = STAGES.map((s) => p.by_stage[s]?.count ?? 0);
  return STAGES.map((stage, i) => ({
    label: stage,
    bars: [
      { name: "at or past", value: at.slice(i).reduce((a, b) => a + b, 0) },
      { name: "at", value: at[i] },
    ],
  }));
}

/**
 * STAGE_TIME_DAYS is the window of the time in stage: the stints that
 * ended in the last 90 days. Not TREND_DAYS (30), the span of the daily
 * charts: those plot one value a day, where this is one number a stage
 * over stints that last days to weeks, so a month would leave most stages
 * with a stint or two. 90 is also the API's default, so the page agrees
 * with a bare GET /api/ideas/stage-times.
 */
const STAGE_TIME_DAYS = 90;

/**
 * StageTimesTable shows, for each stage, the median and 90th percentile
 * of the stints that ended in the window and how many there were (n), so
 * a median of one stint reads as such; — is a stage no idea left.
 */
function StageTimesTable({ times }: { times: StageTimes }) {
  const last = `the last ${times.days} days`;
  return (
    <div class="stage-times">
      <div class="table-wrap" role="region" aria-labelledby="stage-times-caption" tabIndex={0}>
        <table aria-describedby="stage-times-note">
          <caption id="stage-times-caption">Median time in stage, {last}</caption>
          <thead>
            <tr>
              <th scope="col">Stage</th>
              <th scope="col" class="num">
                Median
              </th>
              <th scope="col" class="num">
                <abbr title="90th percentile">P90</abbr>
              </th>
              <th scope="col" class="num">
                Stints
              </th>
            </tr>
          </thead>
          <tbody>
            {times.stages.map((t) => {
              const none =
                `No idea left ${t.stage} in ${last}` +
                (t.stage === "complete" ? " (ideas rarely leave complete)" : "");
              const of = `${t.stints} ${t.stints === 1 ? "stint" : "stints"}`;
              return (
                <tr key={t.stage} data-stage={t.stage}>
                  <th scope="row">
                    <StageBadge stage={t.stage} />
                  </th>
                  {t.stints === 0 || t.median_seconds == null ? (
                    <>
                      <td class="num" title={none}>
                        —
                      </td>
                      <td class="num muted" title={none}>
                        —
                      </td>
                    </>
                  ) : (
                    <>
                      <td class="num" title={`The median of ${of} that ended in ${last}`}>
                        {fmt.span(t.median_seconds)}
                      </td>
                      <td class="num muted" title={`90 % of the ${of} were this long or shorter`}>
                        {fmt.span(t.p90_seconds)}
                      </td>
                    </>
                  )}
                  <td class="num">n = {fmt.num(t.stints)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p id="stage-times-note" class="muted note">
        A stint is one idea's stay in a stage, from entering it to leaving it; n counts those that ended in{" "}
        {last}, and 90 % of them were as long as P90 or shorter. — is a stage no idea left in that time.
      </p>
    </div>
  );
}

export function PortfolioView() {
  useTitle("Portfolio");
  const ideas = useLive("portfolio", "ideas", api.ideas);
  const sizing = useLive("right-sizing", "sizing", api.rightSizing);
  const progress = useLive("stage counts", "progress", api.progress);
  const times = useLive("time in stage", "stage-times", (s) => api.stageTimes(STAGE_TIME_DAYS, s));
  const list = ideas.data?.ideas ?? [];
  const signals = new Map((sizing.data?.signals ?? []).map((s) => [s.idea_id, s]));
  const names = new Map(list.map((i) => [i.id, i.name]));
  const summary = ideas.data?.summary;
  const page = ideas.data?.pagination;

  return (
    <>
      <h1 tabIndex={-1}>Portfolio</h1>
      <LoadState of={ideas} what="the ideas" />
      {summary && (
        <Facts
          items={[
            ["Active ideas", fmt.num(summary.total_ideas)],
            ["Validated", fmt.num(summary.validated_ideas)],
            ["Not yet validated", fmt.num(summary.unvalidated_ideas)],
            ["Potential value", fmt.num(summary.total_potential_value)],
            ["Value gap", fmt.num(summary.total_value_gap)],
          ]}
        />
      )}

      <section aria-labelledby="ranking-h">
        <h2 id="ranking-h">Ranking</h2>
        {page && page.has_more && (
          <p class="muted">
            Showing the best {list.length} of {page.total} ideas.
          </p>
        )}
        {ideas.data && list.length === 0 && <p>No ideas yet. Create one with POST /api/ideas.</p>}
        {list.length > 0 && (
          <div class="table-wrap" role="region" aria-labelledby="ranking-caption" tabIndex={0}>
            <table class="ranking">
              <caption id="ranking-caption">Ideas ranked by free-energy score, highest first</caption>
              <thead>
                <tr>
                  <th scope="col">Rank</th>
                  <th scope="col">Idea</th>
                  <th scope="col">Stage</th>
                  <th scope="col" class="num">
                    Score
                  </th>
                  <th scope="col" class="num">
                    Potential value
                  </th>
                  <th scope="col" class="num">
                    Estimated cost
                  </th>
                  <th scope="col" class="num">
                    Confidence
                  </th>
                  <th scope="col" class="num">
                    Open questions
                  </th>
                  <th scope="col">Right-sizing</th>
                </tr>
              </thead>
              <tbody>
                {list.map((idea, i) => (
                  <tr key={idea.id} data-idea-id={idea.id}>
                    <td class="num">{i + 1}</td>
                    <th scope="row">
                      <a href={href.idea(idea.id)}>{idea.name}</a>
                    </th>
                    <td>
                      <StageBadge stage={idea.stage} />
                    </td>
                    <td class="num">{fmt.score(idea.score)}</td>
                    <td class="num">{fmt.num(idea.potential_value)}</td>
                    <td class="num">{fmt.num(idea.estimated_cost)}</td>
                    <td class="num">{fmt.pct(idea.confidence)}</td>
                    <td class="num">{idea.open_question_count}</td>
                    <td>{signalText(signals.get(idea.id)) || <span class="muted">healthy</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="funnel-h">
        <h2 id="funnel-h">Stage funnel</h2>
        <LoadState of={progress} what="the stage counts" />
        <LoadState of={times} what="the time in stage" />
        {(progress.data || times.data) && (
          <div class="charts">
            {progress.data && (
              <BarChart
                id="chart-funnel"
                title="Active ideas at or past each stage, and at it"
                groups={funnelGroups(progress.data)}
                format={(v) => fmt.num(v)}
                max={progress.data.total_ideas}
                empty="No active ideas yet."
              />
            )}
            {times.data && <StageTimesTable times={times.data} />}
          </div>
        )}
      </section>

      <section aria-labelledby="stages-h">
        <h2 id="stages-h">By stage</h2>
        <div class="board">
          {STAGES.map((stage) => {
            const here = list.filter((i) => i.stage === stage);
            return (
              <section class="column" key={stage} aria-labelledby={`col-${stage}`}>
                <h3 id={`col-${stage}`}>
                  <StageBadge stage={stage} /> <span class="count">{here.length}</span>
                </h3>
                {here.length === 0 ? (
                  <p class="muted">None</p>
                ) : (
                  <ol class="cards">
                    {here.map((idea) => (
                      <IdeaCard key={idea.id} idea={idea} />
                    ))}
                  </ol>
                )}
              </section>
            );
          })}
        </div>
      </section>

      <section aria-labelledby="sizing-h">
        <h2 id="sizing-h">Right-sizing</h2>
        <LoadState of={sizing} what="the right-sizing report" />
        {sizing.data && (
          <>
            <Facts
              items={[
                ["Healthy", fmt.num(sizing.data.health?.healthy)],
                ["Too large", fmt.num(sizing.data.health?.too_large)],
                ["Too small", fmt.num(sizing.data.health?.too_small)],
                ["Overlapping", fmt.num(sizing.data.health?.overlap)],
                ["Suggestions", fmt.num(sizing.data.health?.suggestion_count)],
              ]}
            />
            {sizing.data.suggestions.length === 0 ? (
              <p>No suggestions: every idea is the right size.</p>
            ) : (
              <ul class="suggestions">
                {sizing.data.suggestions.map((s) => (
                  <li key={`${s.suggestion_type}-${s.idea_id}-${s.overlap_with_id ?? ""}`}>
                    <p>
                      <strong>{s.suggestion_type === "split" ? "Split" : "Merge"}</strong>{" "}
                      <a href={href.idea(s.idea_id)}>{names.get(s.idea_id) ?? s.idea_id}</a>
                      {s.overlap_with_id && (
                        <>
                          {" with "}
                          <a href={href.idea(s.overlap_with_id)}>
                            {names.get(s.overlap_with_id) ?? s.overlap_with_id}
                          </a>
                        </>
                      )}{" "}
                      <span class="muted">(confidence {fmt.pct(s.confidence)})</span>
                    </p>
                    <p>{s.rationale}</p>
                    {s.proposed_children.length > 0 && (
                      <p>Into: {s.proposed_children.map((c) => c.name).join("; ")}</p>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </section>
    </>
  );
}

function IdeaCard({ idea }: { idea: Idea }) {
  return (
    <li class="card">
      <a href={href.idea(idea.id)}>{idea.name}</a>
      <span class="muted"> score {fmt.score(idea.score)}</span>
    </li>
  );
}
