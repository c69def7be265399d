// The /api JSON routes the dashboard calls, and the shapes of their answers,
// both from the OpenAPI document the gateway serves (/api/openapi.json)
// through src/api.gen.ts, generated from it with `npm run gen:types`. Every
// call goes through openapi-fetch typed by the document's paths, so a route,
// path parameter, query parameter or body the document does not have fails
// `tsc`, and so does a field the API renames or drops in the view that
// reads it. docs/api.md has the routes in full. The page calls nothing
// else, so it works the same against any Foundry, on SQLite or Postgres.
// Every call sends the signed-in credential, when there is one
// (src/auth.tsx).

import createClient from "openapi-fetch";
import type { components, paths } from "./api.gen";

type schemas = components["schemas"];

/**
 * everyOf checks a list of an enum's values against the document, in both
 * directions and at compile time only: a value the API does not have fails
 * `tsc`, and so does a value of the API the list leaves out (its error
 * names it, as "missing").
 */
export const everyOf =
  <T extends string>() =>
  <const L extends readonly T[]>(
    list: L & ([Exclude<T, L[number]>] extends [never] ? unknown : { missing: Exclude<T, L[number]> }),
  ): L =>
    list;

/**
 * Words is a field's closed vocabulary: the document's enum once the field
 * has one, and until then (the document types a principal's role and kind,
 * and a suggestion's type, as plain strings) the words the page knows.
 */
type Words<Doc, Known extends string> = string extends Doc ? Known : Doc;

/**
 * With puts R's types in place of T's fields of those names, for the Words
 * above. A name T does not have is an error, so a field the document
 * renames cannot slip through.
 */
type With<T, R extends { [K in keyof R]: K extends keyof T ? unknown : never }> = {
  [K in keyof T]: K extends keyof R ? R[K] : T[K];
};

export type Stage = schemas["v1Stage"];

/** STAGES are an idea's stages in order, which the page needs at run time. */
export const STAGES = everyOf<Stage>()(["none", "specced", "implementing", "testing", "reviewing", "complete"]);

export type Idea = schemas["v1Idea"];
export type IdeaList = schemas["v1ListIdeasResponse"];
export type Progress = schemas["v1GetProgressResponse"];
export type StageTime = schemas["v1StageTime"];
export type StageTimes = schemas["v1GetStageTimesResponse"];

type StageChangeDoc = schemas["v1StageChange"];
/** StageChange is one change of an idea's stage; from is a Stage word, null at creation. */
export type StageChange = With<
  StageChangeDoc,
  {
    from: Words<NonNullable<StageChangeDoc["from"]>, Stage> | null;
    reason: Words<StageChangeDoc["reason"], "created" | "advance" | "operator" | "update" | "task" | "migrated">;
  }
>;
export type StageChanges = { changes: StageChange[]; pagination: schemas["v1Pagination"] | null };

export type IdeaSignals = schemas["v1IdeaSignals"];
type SuggestionDoc = schemas["v1RightSizingSuggestion"];
export type Suggestion = With<
  SuggestionDoc,
  { suggestion_type: Words<SuggestionDoc["suggestion_type"], "split" | "merge"> }
>;
export type RightSizing = With<schemas["v1GetRightSizingResponse"], { suggestions: Suggestion[] }>;

export type Question = schemas["v1Question"];
export type QuestionList = schemas["v1ListQuestionsResponse"];
export type InvestPreview = schemas["v1GetInvestPreviewResponse"];
export type IdeaImpact = schemas["v1ListIdeaImpactResponse"];

export type TaskItem = schemas["v1AgentTaskListItem"];
export type TaskStatus = schemas["v1TaskStatus"];
export type TaskList = schemas["v1ListTasksResponse"];
export type Task = schemas["v1AgentTask"];
export type RetriedTasks = schemas["v1RetryTasksResponse"];

export type PipelineStatus = schemas["v1GetPipelineStatusResponse"];
export type Metrics = schemas["v1GetMetricsResponse"];
export type DayMetrics = schemas["v1DayMetrics"];
export type DailyMetrics = schemas["v1GetDailyMetricsResponse"];
export type DiagnosticsCompleteness = schemas["v1GetDiagnosticsCompletenessResponse"];

export type Supply = schemas["v1GetSupplyResponse"];
export type SupplyDay = schemas["v1SupplyDay"];
export type SupplyHistory = schemas["v1GetSupplyHistoryResponse"];
export type AuditEntry = schemas["v1AuditEntry"];
export type AuditList = schemas["v1ListAuditEntriesResponse"];
export type IncidentStatus = schemas["v1GetIncidentStatusResponse"];
export type Incident = schemas["v1Incident"];
export type IncidentList = schemas["v1ListIncidentsResponse"];
export type Contributor = schemas["v1ContributorSummary"];
export type ContributorList = schemas["v1ListContributorsResponse"];

/** ApiError is a non-2xx answer; detail is Foundry's {"detail"} text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`${status}: ${detail}`);
  }
}

/**
 * Credential is what the reader pasted to sign in: a Bearer token (a
 * contributor's session token or an API token, fdt_…) or the
 * administrator key, sent as X-API-Key.
 */
export interface Credential {
  kind: "bearer" | "admin";
  value: string;
}

type PrincipalDoc = schemas["v1GetPrincipalResponse"];

/** The role names GET /api/whoami answers, "none" for no credential. */
export type Role = Words<PrincipalDoc["role"], "none" | "viewer" | "contributor" | "worker" | "operator" | "admin">;

/** Whoami is GET /api/whoami: who the request's credential is. */
export type Whoami = With<
  PrincipalDoc,
  { kind: Words<PrincipalDoc["kind"], "anonymous" | "session" | "token" | "admin">; role: Role }
>;

// The credential every call sends; set by the sign-in (src/auth.tsx).
let current: Credential | null = null;

export function setCredential(c: Credential | null) {
  current = c;
}

function authHeaders(c: Credential | null): Record<string, string> {
  if (!c) return {};
  return c.kind === "admin" ? { "X-API-Key": c.value } : { Authorization: `Bearer ${c.value}` };
}

// Same origin: the page is served by the Foundry it reads.
const client = createClient<paths>({ headers: { Accept: "application/json" } });

/**
 * init is a call's signal and credential: the signed-in one, or as, when
 * given (null: none at all), which sign-in uses to try a credential before
 * keeping it.
 */
function init(signal?: AbortSignal, as?: Credential | null) {
  return { signal, headers: authHeaders(as === undefined ? current : as) };
}

/** body is a 2xx answer's body, or the failure as an ApiError. */
async function body<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    // error is the {"detail"} body the document promises, or the raw text
    // when it is not JSON (a proxy's HTML error page): then the status says it.
    const detail = (error as { detail?: unknown } | null | undefined)?.detail;
    throw new ApiError(
      response.status,
      typeof detail === "string" ? detail : response.statusText || "request failed",
    );
  }
  if (data === undefined) throw new ApiError(response.status, "the answer has no body");
  return data;
}

export const api = {
  /** whoami asks who a credential is: the signed-in one, or as (null: none). */
  whoami: async (as?: Credential | null, s?: AbortSignal): Promise<Whoami> =>
    // The words of role and kind are the page's (Words): the document has none.
    (await body(client.GET("/api/whoami", init(s, as)))) as Whoami,
  ideas: (s?: AbortSignal): Promise<IdeaList> =>
    body(client.GET("/api/ideas", { params: { query: { limit: 500 } }, ...init(s) })),
  rightSizing: async (s?: AbortSignal): Promise<RightSizing> =>
    // The words of suggestion_type are the page's (Words): the document has none.
    (await body(client.GET("/api/ideas/right-sizing", init(s)))) as RightSizing,
  idea: (id: string, s?: AbortSignal): Promise<Idea> =>
    body(client.GET("/api/ideas/{id}", { params: { path: { id } }, ...init(s) })),
  /** progress counts the active ideas by stage; one id a stage is enough, the page reads the counts. */
  progress: (s?: AbortSignal): Promise<Progress> =>
    body(client.GET("/api/ideas/progress", { params: { query: { limit: 1 } }, ...init(s) })),
  /**
   * stageTimes is how long ideas stayed in each stage, every stage in order:
   * the median and p90 of the stints that ended in the last days (1..365).
   */
  stageTimes: (days: number, s?: AbortSignal): Promise<StageTimes> =>
    body(client.GET("/api/ideas/stage-times", { params: { query: { days } }, ...init(s) })),
  /** stages is the first limit changes of an idea's stage history, oldest first (1..500). */
  stages: async (id: string, limit: number, s?: AbortSignal): Promise<StageChanges> =>
    // from and reason are Stage words and the page's (Words): the document types them as strings.
    (await body(
      client.GET("/api/ideas/{id}/stages", { params: { path: { id }, query: { limit } }, ...init(s) }),
    )) as StageChanges,
  questions: (id: string, s?: AbortSignal): Promise<QuestionList> =>
    body(client.GET("/api/ideas/{id}/questions", { params: { path: { id } }, ...init(s) })),
  investPreview: (id: string, s?: AbortSignal): Promise<InvestPreview> =>
    body(client.GET("/api/ideas/{idea_id}/invest-preview", { params: { path: { idea_id: id } }, ...init(s) })),
  /** impact is the idea's newest impact records and the totals of all. */
  impact: (id: string, limit: number, s?: AbortSignal): Promise<IdeaImpact> =>
    body(client.GET("/api/ideas/{idea_id}/impact", { params: { path: { idea_id: id }, query: { limit } }, ...init(s) })),
  // Advance sends an empty body: it names no stage, so the idea moves to
  // its next one (docs/portfolio.md).
  advance: (id: string): Promise<Idea> =>
    body(client.POST("/api/ideas/{idea_id}/advance", { params: { path: { idea_id: id } }, body: {}, ...init() })),
  /** retryTask puts a failed, timed-out, discarded or cancelled task back in the queue (operator). */
  retryTask: (id: string): Promise<Task> =>
    body(client.POST("/api/agent/tasks/{id}/retry", { params: { path: { id } }, body: {}, ...init() })),
  /** retryTasks retries in bulk, newest first, up to limit tasks of a status (operator). */
  retryTasks: (status: TaskStatus, limit: number): Promise<RetriedTasks> =>
    body(client.POST("/api/agent/tasks/retry", { body: { status, limit }, ...init() })),
  /** cancelTask takes a task out of the queue (operator). */
  cancelTask: (id: string, reason: string): Promise<Task> =>
    body(client.POST("/api/agent/tasks/{id}/cancel", { params: { path: { id } }, body: { reason }, ...init() })),
  /** tasks lists the newest tasks, of one status when given. */
  tasks: (status: TaskStatus | undefined, limit: number, s?: AbortSignal): Promise<TaskList> =>
    body(client.GET("/api/agent/tasks", { params: { query: { limit, status } }, ...init(s) })),
  ideaTasks: (ideaID: string, limit: number, s?: AbortSignal): Promise<TaskList> =>
    body(client.GET("/api/agent/tasks", { params: { query: { idea_id: ideaID, limit } }, ...init(s) })),
  pipelineStatus: (s?: AbortSignal): Promise<PipelineStatus> => body(client.GET("/api/agent/pipeline-status", init(s))),
  metrics: (days: number, s?: AbortSignal): Promise<Metrics> =>
    body(client.GET("/api/agent/metrics", { params: { query: { window_days: days } }, ...init(s) })),
  /** dailyMetrics is the pipeline's last days, oldest first, today (UTC) last. */
  dailyMetrics: (days: number, s?: AbortSignal): Promise<DailyMetrics> =>
    body(client.GET("/api/agent/metrics/daily", { params: { query: { days } }, ...init(s) })),
  diagnostics: (s?: AbortSignal): Promise<DiagnosticsCompleteness> =>
    body(client.GET("/api/agent/diagnostics-completeness", init(s))),
  supply: (s?: AbortSignal): Promise<Supply> => body(client.GET("/api/cc/supply", init(s))),
  /** supplyHistory is the backing at the end of each of the last days, oldest first. */
  supplyHistory: (days: number, s?: AbortSignal): Promise<SupplyHistory> =>
    body(client.GET("/api/cc/supply/history", { params: { query: { days } }, ...init(s) })),
  audit: (limit: number, s?: AbortSignal): Promise<AuditList> =>
    body(client.GET("/api/audit", { params: { query: { limit } }, ...init(s) })),
  incidentStatus: (s?: AbortSignal): Promise<IncidentStatus> => body(client.GET("/api/incidents/status", init(s))),
  incidents: (limit: number, s?: AbortSignal): Promise<IncidentList> =>
    body(client.GET("/api/incidents", { params: { query: { limit } }, ...init(s) })),
  /** contributors lists the first contributors, oldest first, with their handles and balances. */
  contributors: (limit: number, s?: AbortSignal): Promise<ContributorList> =>
    body(client.GET("/api/contributors", { params: { query: { limit } }, ...init(s) })),
};
