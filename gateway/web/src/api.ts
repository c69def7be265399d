// The /api JSON routes the dashboard reads, and the shapes of their
// answers. The shapes come from the OpenAPI document the gateway serves
// (/api/openapi.json), through src/api.gen.ts, generated from it with
// `npm run gen:types`: a field the API renames or drops fails `tsc` here or
// in the view that reads it. docs/api.md has the routes in full. The page
// calls nothing else, so it works the same against any Foundry, on SQLite
// or Postgres. Every call sends the signed-in credential, when there is one
// (src/auth.tsx).

import type { components } from "./api.gen";

// The document is Swagger 2.0, whose schemas are its "definitions"; the
// generator reads them as OpenAPI 3's components.schemas (gen-types.mjs).
type definitions = components["schemas"];

/**
 * Emitted is an answer as the gateway sends it. The document marks every
 * field optional (proto3 has no required fields), but the gateway sends
 * them all (protojson's EmitUnpopulated): a zero as 0 or "", a list as [],
 * a map as {}. A message or wrapper field left unset comes as null: the
 * services set every message the page reads, and OrNull marks the
 * wrappers.
 */
type Emitted<T> = T extends readonly (infer E)[]
  ? Emitted<E>[]
  : T extends object
    ? { [K in keyof T]-?: Emitted<T[K]> }
    : T;

/**
 * OrNull marks K as null when unset: the protos declare these fields as
 * google.protobuf wrappers, which the document types as their plain value.
 */
type OrNull<T, K extends keyof T> = { [P in keyof T]: P extends K ? T[P] | null : T[P] };

/**
 * With puts R's types in place of T's fields of those names: a list whose
 * items are refined here, or a closed vocabulary (Words). A name T does not
 * have is an error, so a field the document renames cannot slip through.
 */
type With<T, R extends { [K in keyof R]: K extends keyof T ? unknown : never }> = {
  [K in keyof T]: K extends keyof R ? R[K] : T[K];
};

/**
 * Words is a field's closed vocabulary: the document's enum once the field
 * has one, and until then (a plain string) the words the page knows.
 */
type Words<Doc, Known extends string> = string extends Doc ? Known : Doc;

type IdeaDoc = Emitted<definitions["v1Idea"]>;

/**
 * STAGES are an idea's stages in order, which the page needs at run time
 * and the document's types cannot give; each must be a stage the API knows.
 */
export const STAGES = [
  "none",
  "specced",
  "implementing",
  "testing",
  "reviewing",
  "complete",
] as const satisfies readonly IdeaDoc["stage"][];
export type Stage = Words<IdeaDoc["stage"], (typeof STAGES)[number]>;

export type Idea = With<OrNull<IdeaDoc, "parent_idea_id">, { stage: Stage }>;
export type IdeaList = With<Emitted<definitions["v1ListIdeasResponse"]>, { ideas: Idea[] }>;

export type IdeaSignals = Emitted<definitions["v1IdeaSignals"]>;
type SuggestionDoc = OrNull<Emitted<definitions["v1RightSizingSuggestion"]>, "overlap_with_id">;
export type Suggestion = With<
  SuggestionDoc,
  { suggestion_type: Words<SuggestionDoc["suggestion_type"], "split" | "merge"> }
>;
export type RightSizing = With<Emitted<definitions["v1GetRightSizingResponse"]>, { suggestions: Suggestion[] }>;

export type Question = Emitted<definitions["v1Question"]>;
export type QuestionList = Emitted<definitions["v1ListQuestionsResponse"]>;
export type InvestPreview = Emitted<definitions["v1GetInvestPreviewResponse"]>;

export type TaskItem = OrNull<Emitted<definitions["v1AgentTaskListItem"]>, "error_summary" | "error_category">;
/** TaskStatus is a task's status as the document has it: a list of statuses is checked against it. */
export type TaskStatus = TaskItem["status"];
export type TaskList = With<Emitted<definitions["v1ListTasksResponse"]>, { tasks: TaskItem[] }>;

export type PipelineStatus = OrNull<
  Emitted<definitions["v1GetPipelineStatusResponse"]>,
  "longest_pending_seconds" | "success_rate"
>;
export type Metrics = With<
  Emitted<definitions["v1GetMetricsResponse"]>,
  { execution_time: OrNull<Emitted<definitions["v1ExecutionTime"]>, "p50_seconds" | "p95_seconds"> }
>;
export type DiagnosticsCompleteness = Emitted<definitions["v1GetDiagnosticsCompletenessResponse"]>;

export type Supply = Emitted<definitions["v1GetSupplyResponse"]>;
export type AuditEntry = Emitted<definitions["v1AuditEntry"]>;
export type AuditList = Emitted<definitions["v1ListAuditEntriesResponse"]>;
export type IncidentStatus = OrNull<
  Emitted<definitions["v1GetIncidentStatusResponse"]>,
  "frozen_reason" | "mode_reason"
>;
export type Incident = Emitted<definitions["v1Incident"]>;
export type IncidentList = Emitted<definitions["v1ListIncidentsResponse"]>;

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

type PrincipalDoc = OrNull<
  Emitted<definitions["v1GetPrincipalResponse"]>,
  "contributor_id" | "handle" | "token_id" | "name" | "expires_at"
>;

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

/**
 * call sends one request to the same origin with the signed-in credential,
 * or with as, when given (null: none at all), which sign-in uses to try a
 * credential before keeping it.
 */
async function call<T>(method: string, path: string, signal?: AbortSignal, as?: Credential | null): Promise<T> {
  const headers = { Accept: "application/json", ...authHeaders(as === undefined ? current : as) };
  const res = await fetch(path, { method, signal, headers });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // A proxy's HTML error page, say: reported by status below.
  }
  if (!res.ok) {
    const detail = (body as { detail?: unknown } | null)?.detail;
    throw new ApiError(res.status, typeof detail === "string" ? detail : res.statusText || "request failed");
  }
  return body as T;
}

const enc = encodeURIComponent;

export const api = {
  /** whoami asks who a credential is: the signed-in one, or as (null: none). */
  whoami: (as?: Credential | null, s?: AbortSignal) => call<Whoami>("GET", "/api/whoami", s, as),
  ideas: (s?: AbortSignal) => call<IdeaList>("GET", "/api/ideas?limit=500", s),
  rightSizing: (s?: AbortSignal) => call<RightSizing>("GET", "/api/ideas/right-sizing", s),
  idea: (id: string, s?: AbortSignal) => call<Idea>("GET", `/api/ideas/${enc(id)}`, s),
  questions: (id: string, s?: AbortSignal) =>
    call<QuestionList>("GET", `/api/ideas/${enc(id)}/questions`, s),
  investPreview: (id: string, s?: AbortSignal) => call<InvestPreview>("GET", `/api/ideas/${enc(id)}/invest-preview`, s),
  // Advance takes no body, so it needs no Content-Type (docs/api.md).
  advance: (id: string) => call<Idea>("POST", `/api/ideas/${enc(id)}/advance`),
  tasks: (status: string, limit: number, s?: AbortSignal) =>
    call<TaskList>("GET", `/api/agent/tasks?limit=${limit}${status ? `&status=${enc(status)}` : ""}`, s),
  ideaTasks: (ideaID: string, limit: number, s?: AbortSignal) =>
    call<TaskList>("GET", `/api/agent/tasks?idea_id=${enc(ideaID)}&limit=${limit}`, s),
  pipelineStatus: (s?: AbortSignal) => call<PipelineStatus>("GET", "/api/agent/pipeline-status", s),
  metrics: (days: number, s?: AbortSignal) => call<Metrics>("GET", `/api/agent/metrics?window_days=${days}`, s),
  diagnostics: (s?: AbortSignal) => call<DiagnosticsCompleteness>("GET", "/api/agent/diagnostics-completeness", s),
  supply: (s?: AbortSignal) => call<Supply>("GET", "/api/cc/supply", s),
  audit: (limit: number, s?: AbortSignal) =>
    call<AuditList>("GET", `/api/audit?limit=${limit}`, s),
  incidentStatus: (s?: AbortSignal) => call<IncidentStatus>("GET", "/api/incidents/status", s),
  incidents: (limit: number, s?: AbortSignal) =>
    call<IncidentList>("GET", `/api/incidents?limit=${limit}`, s),
};
