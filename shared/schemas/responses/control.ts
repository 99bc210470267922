import * as z from 'zod/mini';
import { segmentDefinitionShape } from '../control.ts';
import { named } from '../doc.ts';
import { platformPage, recordId, seconds } from './common.ts';

/** Platform API answers of the control plane: rules, segments, experiments, rerank controls, the audit trail. */

const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const rule = named(
  'Rule',
  z.strictObject({
    id: recordId,
    name: z.string(),
    context_id: recordId,
    conditions: z.array(z.strictObject({ field: z.string(), op: z.enum(['eq', 'neq', 'in', 'gte', 'lte', 'exists']), value: z.optional(z.union([scalar, z.array(scalar)])) })),
    boost: z.number(),
    segment_id: z.nullable(recordId),
    starts_at: z.nullable(seconds),
    ends_at: z.nullable(seconds),
    enabled: z.boolean(),
    created: seconds,
    updated_at: seconds,
  }),
  '`boost` multiplies the score of matching items: above 1 promotes, 0 to 1 demotes, 0 excludes.',
);

export const segment = named(
  'Segment',
  z.strictObject({
    id: recordId,
    name: z.string(),
    description: z.string(),
    definition: segmentDefinitionShape,
    size_estimate: z.nullable(z.int()),
    size_computed_at: z.nullable(seconds),
    created: seconds,
    updated_at: seconds,
  }),
);

const controls = {
  diversity: z.number(),
  popularity_weight: z.number(),
  freshness_weight: z.number(),
  max_per_category: z.int(),
  exclude_seen: z.boolean(),
};
const optionalControls = z.strictObject(Object.fromEntries(Object.entries(controls).map(([k, v]) => [k, z.optional(v)])) as { [K in keyof typeof controls]: z.ZodMiniOptional<(typeof controls)[K]> });

export const rerankControls = named(
  'RerankControls',
  z.strictObject({
    context_id: recordId,
    diversity: z.nullable(controls.diversity),
    popularity_weight: z.nullable(controls.popularity_weight),
    freshness_weight: z.nullable(controls.freshness_weight),
    max_per_category: z.nullable(controls.max_per_category),
    exclude_seen: z.nullable(controls.exclude_seen),
    updated_at: z.nullable(seconds),
  }),
  "A context's rerank controls: every control, null when unset.",
);

const variant = z.strictObject({ name: z.string(), endpoint_name: z.string(), traffic_percent: z.number(), rerank: z.optional(optionalControls) });

export const experiment = named(
  'Experiment',
  z.strictObject({
    id: recordId,
    name: z.string(),
    context_id: recordId,
    segment_id: z.nullable(recordId),
    variants: z.array(variant),
    status: z.enum(['Draft', 'Running', 'Stopped']),
    attribution_window_seconds: z.int(),
    started_at: z.nullable(seconds),
    stopped_at: z.nullable(seconds),
    created: seconds,
    updated_at: seconds,
  }),
);

const ratio = z.nullable(z.number());
const interval = z.nullable(z.tuple([ratio, ratio]));
const variantResults = z.strictObject({
  name: z.string(),
  endpoint_name: z.string(),
  traffic_percent: z.number(),
  requests: z.int(),
  users: z.int(),
  events: z.record(
    z.string(),
    z.strictObject({
      events: z.int(),
      events_per_request: ratio,
      requests_with_event: z.int(),
      rate_per_request: ratio,
      users_with_event: z.int(),
      rate_per_user: ratio,
      lift: z.nullable(z.strictObject({ relative: ratio, ci_95: interval, difference: ratio, difference_ci_95: interval })),
    }),
  ),
});

export const experimentWithResults = named(
  'ExperimentWithResults',
  z.extend(experiment, {
    results: z.strictObject({
      variants: z.array(variantResults),
      sample_ratio_mismatch: z.nullable(z.strictObject({ statistic: ratio, p_value: ratio, mismatch: z.boolean() })),
      attribution_window_seconds: z.int(),
    }),
  }),
  'Per variant: requests served, distinct users, and per event type the events attributed by `request_id`, their rates and the lift over the first variant with its 95 % interval.',
);

export const auditEntry = named(
  'AuditEntry',
  z.strictObject({
    id: recordId,
    at: seconds,
    actor: z.nullable(z.string()),
    action: z.enum(['create', 'update', 'delete']),
    resource: z.string(),
    before: z.unknown(),
    after: z.unknown(),
  }),
);

export const ruleList = named('RuleList', platformPage(rule));
export const segmentList = named('SegmentList', platformPage(segment));
export const experimentList = named('ExperimentList', platformPage(experimentWithResults));
export const auditList = named('AuditList', platformPage(auditEntry));
