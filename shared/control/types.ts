/**
 * The control plane's records: what a merchant configures per context (placement) to steer what
 * is served. Rules, segments, experiments and rerank controls of a tenant are console records of
 * one partition, so a serving function reads them all with one Query (ControlStore.config).
 */

/** Item fields a rule condition reads: `metadata.<key>` at any depth (dotted), or a top-level field. */
export type ConditionOp = 'eq' | 'neq' | 'in' | 'gte' | 'lte' | 'exists';
export type Scalar = string | number | boolean;
export interface Condition {
  /** `category` (= `metadata.category`), `name`, `created`, or `metadata.a.b.c`. */
  field: string;
  op: ConditionOp;
  /** A list for `in`; a number (or, for `created`, Unix seconds) for `gte`/`lte`; a boolean for `exists`. */
  value?: Scalar | Scalar[] | undefined;
}

export interface Rule {
  id: number;
  name: string;
  context_id: number;
  conditions: Condition[];
  /** Multiplies the score of matching items: > 1 promotes, 0-1 demotes, 0 excludes. */
  boost: number;
  segment_id: number | null;
  starts_at: number | null;
  ends_at: number | null;
  enabled: boolean;
  created: number;
  updated_at: number;
}

export type SegmentDefinition = { event_type: string; min_count: number; within_days: number } | { all: SegmentDefinition[] } | { any: SegmentDefinition[] };

export interface Segment {
  id: number;
  name: string;
  description: string;
  definition: SegmentDefinition;
  /** Refreshed by the maintenance worker: users matching, over the events it counts. */
  size_estimate: number | null;
  size_computed_at: number | null;
  created: number;
  updated_at: number;
}

export interface RerankControls {
  /** 0-1: maximal marginal relevance over the item vectors (0 or unset: off). */
  diversity?: number | undefined;
  popularity_weight?: number | undefined;
  freshness_weight?: number | undefined;
  max_per_category?: number | undefined;
  exclude_seen?: boolean | undefined;
}

/** A context's rerank controls as stored (id = the context id). */
export interface RerankRecord extends RerankControls {
  id: number;
  context_id: number;
  updated_at: number;
}

export interface Variant {
  name: string;
  endpoint_name: string;
  traffic_percent: number;
  /** Rerank controls that, where set, replace the context's own for this variant's users (optional). */
  rerank?: RerankControls | undefined;
}

export type ExperimentStatus = 'Draft' | 'Running' | 'Stopped';
/**
 * How long an experiment's start may be checked (marked `_starting`, `ControlConfig.starting`)
 * before it is taken as held, its check stopped (a crash): by serving, and by a start sent again,
 * which waits for the first at most so long.
 */
export const STARTING_SECONDS = 10;
export interface Experiment {
  id: number;
  name: string;
  context_id: number;
  segment_id: number | null;
  variants: Variant[];
  status: ExperimentStatus;
  /** Events attributed to a served request (by its request_id) within this many seconds of it. */
  attribution_window_seconds: number;
  started_at: number | null;
  stopped_at: number | null;
  created: number;
  updated_at: number;
}

/** What serving reads of a tenant's control plane, in one Query. */
export interface ControlConfig {
  rules: Rule[];
  segments: Segment[];
  /** Draft and Running ones (a Stopped one serves nothing, and is not read). */
  experiments: Experiment[];
  rerank: RerankRecord[];
  /** Ids of the tenant's contexts (so a request naming another tenant's context is 404). */
  contexts: number[];
  /**
   * Ids of the Running experiments whose start is still being checked against another start in
   * their context at once (one of the two undoes itself): serving does not assign them yet.
   */
  starting?: number[];
}
