/**
 * The console's only way to the service: same-origin fetches with the session cookie (HttpOnly,
 * never seen here) and, on every request that changes something, the session's CSRF token.
 * No API key or Core token ever reaches the browser.
 */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: (() => void) | undefined;

export const setCsrfToken = (t: string): void => {
  csrfToken = t;
};
export const whenSignedOut = (fn: () => void): void => {
  onSignedOut = fn;
};

function messageOf(data: unknown, status: number): string {
  if (data && typeof data === 'object' && 'error' in data) {
    const e = (data as { error: unknown }).error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  }
  return `Request failed (HTTP ${status})`;
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown = text;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    if (res.status === 401 && path !== '/console/session') onSignedOut?.();
    throw new ApiFailure(res.status, messageOf(data, res.status));
  }
  return data as T;
}

export const qs = (params: Record<string, string | number | boolean | undefined>): string => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
};

// Shapes of what the console reads (the fields it shows).
export interface Session {
  email: string;
  tenant: string;
  role: 'admin' | 'viewer';
  csrf_token: string;
  expires_at: number;
}
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}
export interface Item {
  id: string;
  name: string;
  description?: string;
  metadata?: Record<string, unknown>;
  active: boolean;
  created: number;
  updated_at: number;
  score?: number;
}
export interface Explain {
  base_score: number;
  rules: { id: number; name: string; boost: number }[];
  score_after_rules: number;
  rerank: Record<string, unknown>[];
  final_score: number;
  experiment?: unknown;
}
export interface SearchHit extends Item {
  highlight?: { name: string; description: string | null };
  explain?: Explain;
}
export interface Facet {
  count: number;
  values: { value: string | boolean; count: number }[];
  values_truncated: boolean;
  min: number | null;
  max: number | null;
}
export interface SearchResult {
  data: SearchHit[];
  total: number;
  has_more: boolean;
  next_cursor: string | null;
  request_id: string;
  facets?: Record<string, Facet>;
  experiment?: { id: number; variant: string };
}
export interface Recommendation {
  item_id: string;
  rank: number;
  score: number;
  reason: string;
  item: Item;
  explain?: Explain;
}
export interface RecsResult {
  data: Recommendation[];
  strategy: string;
  model: { endpoint: string; version: number } | null;
  request_id: string;
}
export interface IndexStatus {
  items: number;
  embedded: number;
  pending: number;
  updated_at: number | null;
  index_built_at: number | null;
  changes_since_build: number;
}
export interface Overview {
  events_per_day: { day: string; count: number }[];
  sampled: boolean;
  latest_event_at: number | null;
}
export interface EventRow {
  id: string;
  type: string;
  user_id: string;
  item_id: string;
  occurred_at: number | null;
  created: number | null;
  request_id: string | null;
  context_id: string | number | null;
}
export interface EventType {
  id: number;
  name: string;
  weight: number;
  created: number;
}
export interface Template {
  id: number;
  name: string;
  event_types: { id: number; weight: number }[];
  thresholds: { per_signal_min: number; total_min: number };
  status: 'Draft' | 'Published';
  created: number;
}
export type JobStatus = 'Queued' | 'InProgress' | 'Stopping' | 'Stopped' | 'Completed' | 'Failed';
export interface Job {
  job_name: string;
  template_id: number;
  status: JobStatus;
  progress: number;
  created: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  model_version: number | null;
  metrics: Record<string, number> | null;
  options: { epochs?: number; batch_size?: number; learning_rate?: number; algorithm?: string };
}
export interface LogLine {
  ts: number;
  message: string;
}
export interface ModelVersion {
  version: number;
  template_id: number;
  job_name: string;
  created: number;
  algorithm: string;
  metrics: Record<string, number>;
  label: string | null;
  description: string | null;
  status: 'Trained' | 'Approved';
  endpoints: string[];
}
export interface Comparison {
  versions: number[];
  metrics: { name: string; higher_is_better: boolean | null; values: Record<string, number | null>; best: number[] | null }[];
}
export interface Endpoint {
  id: number;
  endpoint_name: string;
  is_default: boolean;
  model_version: number | null;
  created: number;
}
export interface Context {
  id: number;
  name: string;
  description: string;
  created: number;
}
export interface Condition {
  field: string;
  op: string;
  value: unknown;
}
export interface Rule {
  id: number;
  name: string;
  context_id: number;
  conditions: Condition[];
  boost: number;
  enabled: boolean;
  segment_id?: number | null;
  created: number;
}
export interface Segment {
  id: number;
  name: string;
  description?: string;
  definition: Record<string, unknown>;
  size_estimate?: number | null;
  created: number;
}
export interface EventResult {
  events: number;
  events_per_request: number | null;
  requests_with_event: number;
  rate_per_request: number | null;
  users_with_event: number;
  rate_per_user: number | null;
  lift: { relative: number | null; ci_95: [number | null, number | null] | null; difference: number | null; difference_ci_95: [number | null, number | null] | null } | null;
}
export interface VariantResult {
  name: string;
  endpoint_name: string;
  traffic_percent: number;
  requests: number;
  users: number;
  events: Record<string, EventResult>;
}
export interface Experiment {
  id: number;
  name: string;
  context_id: number;
  status: 'Draft' | 'Running' | 'Stopped';
  variants: { name: string; endpoint_name: string; traffic_percent: number }[];
  results?: { variants: VariantResult[]; sample_ratio_mismatch?: { p_value: number; mismatch: boolean } };
}
export interface Rerank {
  diversity: number | null;
  popularity_weight: number | null;
  freshness_weight: number | null;
  max_per_category: number | null;
  exclude_seen: boolean | null;
}
export interface ApiKey {
  id: string;
  prefix: string;
  name: string;
  environment: string;
  scopes: string[];
  created: number;
  key?: string;
}
export interface Client {
  client_id: string;
  name: string;
  scopes: string[];
  created: number;
  client_secret?: string;
}
export interface AuditEntry {
  id: number | string;
  at: number;
  actor: string | null;
  action: string;
  resource: string;
  before: unknown;
  after: unknown;
}
