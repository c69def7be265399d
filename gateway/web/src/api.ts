// The /api JSON routes the dashboard reads, with the shapes it uses (a
// subset of each response; docs/api.md and the OpenAPI document at
// /api/openapi.json have them in full). The page calls nothing else, so it
// works the same against any Foundry, on SQLite or Postgres. Every call
// sends the signed-in credential, when there is one (src/auth.tsx).

export const STAGES = ["none", "specced", "implementing", "testing", "reviewing", "complete"] as const;
export type Stage = (typeof STAGES)[number];

export interface Idea {
  id: string;
  name: string;
  description: string;
  potential_value: number;
  estimated_cost: number;
  actual_value: number;
  actual_cost: number;
  confidence: number;
  resistance_risk: number;
  stage: Stage;
  manifestation_status: string;
  tags: string[];
  score: number;
  open_question_count: number;
  parent_idea_id: string | null;
  archived: boolean;
  created_at: string;
  updated_at: string;
}

export interface IdeaList {
  ideas: Idea[];
  summary: {
    total_ideas: number;
    unvalidated_ideas: number;
    validated_ideas: number;
    total_potential_value: number;
    total_actual_value: number;
    total_value_gap: number;
  };
  pagination: { limit: number; offset: number; total: number; has_more: boolean };
}

export interface IdeaSignals {
  idea_id: string;
  name: string;
  too_large: boolean;
  too_small: boolean;
  overlap: boolean;
  open_question_count: number;
  task_count: number;
  overlap_with_ids: string[];
}

export interface Suggestion {
  suggestion_type: "split" | "merge";
  idea_id: string;
  confidence: number;
  rationale: string;
  proposed_children: { name: string; description: string }[];
  overlap_with_id: string | null;
}

export interface RightSizing {
  health: {
    total_ideas: number;
    too_large: number;
    too_small: number;
    overlap: number;
    healthy: number;
    suggestion_count: number;
  };
  signals: IdeaSignals[];
  suggestions: Suggestion[];
  generated_at: string;
}

export interface Question {
  id: string;
  question: string;
  status: string;
  created_at: string;
}

export interface InvestPreview {
  total_cc_staked: number;
  staker_count: number;
  coherence_score: number;
  stage_unlock_pct: number;
  projections: { low_multiplier: number; high_multiplier: number };
}

export interface TaskItem {
  id: string;
  direction: string;
  task_type: string;
  status: string;
  model: string;
  executor: string;
  progress_pct: number;
  error_summary: string | null;
  error_category: string | null;
  created_at: string;
  updated_at: string;
}

export interface TaskList {
  tasks: TaskItem[];
  total: number;
}

export interface PipelineStatus {
  pending: number;
  running: number;
  completed: number;
  failed: number;
  needs_decision: number;
  timed_out: number;
  total: number;
  longest_pending_seconds: number | null;
  success_rate: number | null;
  attention: { stuck: boolean; repeated_failures: boolean; low_success_rate: boolean; flags: string[] };
  generated_at: string;
}

export interface RateBucket {
  completed: number;
  failed: number;
  rate: number;
}

export interface Metrics {
  execution_time: { p50_seconds: number | null; p95_seconds: number | null; sample_count: number; exact: boolean };
  success_rate: { overall: RateBucket; by_task_type: Record<string, RateBucket> };
  window_days: number;
  window_start: string;
}

export interface DiagnosticsCompleteness {
  total_failed: number;
  with_diagnostics: number;
  missing_pct: number;
  by_category: Record<string, number>;
}

export interface Supply {
  total_cc_outstanding: number;
  treasury_value_usd: number;
  exchange_rate: number;
  cc_per_usd: number;
  reserve_ratio: number;
  status: string;
  mode: string;
}

export interface AuditEntry {
  seq: number;
  kind: string;
  actor: string;
  subject: string;
  amount: number;
  attrs: Record<string, string>;
  hash: string;
  created_at: string;
}

export interface IncidentStatus {
  frozen: boolean;
  frozen_reason: string | null;
  oracle_breaker_tripped: boolean;
  reserve_ratio: number;
  audit_chain_valid: boolean;
  severity: string;
  mode: string;
  mode_reason: string | null;
}

export interface Incident {
  id: string;
  kind: string;
  severity: string;
  detail: string;
  actor: string;
  created_at: string;
}

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

/** The role names GET /api/whoami answers, "none" for no credential. */
export type Role = "none" | "viewer" | "contributor" | "worker" | "operator" | "admin";

/** Whoami is GET /api/whoami: who the request's credential is. */
export interface Whoami {
  kind: "anonymous" | "session" | "token" | "admin";
  role: Role;
  contributor_id: string | null;
  handle: string | null;
  token_id: string | null;
  name: string | null;
  expires_at: string | null;
  public_reads: boolean;
}

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
    call<{ questions: Question[] }>("GET", `/api/ideas/${enc(id)}/questions`, s),
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
    call<{ entries: AuditEntry[]; total: number }>("GET", `/api/audit?limit=${limit}`, s),
  incidentStatus: (s?: AbortSignal) => call<IncidentStatus>("GET", "/api/incidents/status", s),
  incidents: (limit: number, s?: AbortSignal) =>
    call<{ incidents: Incident[] }>("GET", `/api/incidents?limit=${limit}`, s),
};
