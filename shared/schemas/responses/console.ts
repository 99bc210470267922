import * as z from 'zod/mini';
import { ALGORITHMS, JOB_STATUSES } from '../console.ts';
import { named } from '../doc.ts';
import { platformPage, recordId, seconds } from './common.ts';

/** Platform API answers of console records: event types, contexts, templates, endpoints, training runs and versions. */

export const eventType = named('EventType', z.strictObject({ id: recordId, name: z.string(), weight: z.int(), created: seconds }));
export const context = named('Context', z.strictObject({ id: recordId, name: z.string(), description: z.string(), created: seconds }));

export const trainingOptions = named('TrainingOptions', z.strictObject({ epochs: z.int(), batch_size: z.int(), learning_rate: z.number(), algorithm: z.enum(ALGORITHMS) }));

export const template = named(
  'Template',
  z.strictObject({
    id: recordId,
    name: z.string(),
    event_types: z.array(z.strictObject({ id: recordId, weight: z.number() })),
    thresholds: z.strictObject({ per_signal_min: z.number(), total_min: z.number() }),
    status: z.enum(['Draft', 'Published']),
    created: seconds,
    updated_at: seconds,
    schedule: z.nullable(
      z.strictObject({
        every: z.optional(z.enum(['hourly', 'daily', 'weekly'])),
        every_hours: z.optional(z.int()),
        start_at: z.optional(seconds),
        options: trainingOptions,
      }),
    ),
    next_run_at: z.nullable(seconds),
    last_scheduled_run: z.nullable(z.strictObject({ job_name: z.string(), due_at: seconds })),
    auto_promote: z.nullable(z.strictObject({ endpoint_name: z.string(), min_factor: z.number() })),
  }),
);

export const endpoint = named(
  'ModelEndpoint',
  z.strictObject({ id: recordId, endpoint_name: z.string(), is_default: z.boolean(), model_version: z.nullable(recordId), created: seconds, updated_at: seconds }),
);

export const job = named(
  'TrainingJob',
  z.strictObject({
    job_name: z.string(),
    template_id: recordId,
    options: trainingOptions,
    status: z.enum(JOB_STATUSES),
    progress: z.number().check(z.gte(0), z.lte(1)),
    created: seconds,
    started_at: z.nullable(seconds),
    finished_at: z.nullable(seconds),
    error: z.nullable(z.string()),
    model_version: z.nullable(recordId),
    metrics: z.nullable(z.record(z.string(), z.number())),
    scheduled_at: z.nullable(seconds),
  }),
  "`scheduled_at`: the due time of a run its template's schedule started (null for runs started by hand).",
);

export const jobLogs = named('TrainingJobLogs', z.strictObject({ job_name: z.string(), lines: z.array(z.strictObject({ ts: seconds, message: z.string() })), next_cursor: z.nullable(z.string()) }));

const promotion = z.strictObject({
  automatic: z.literal(true),
  promoted: z.boolean(),
  endpoint_name: z.string(),
  compared_with: z.nullable(recordId),
  reason: z.string(),
  at: seconds,
});

export const modelVersion = named(
  'ModelVersion',
  z.strictObject({
    version: recordId,
    template_id: recordId,
    job_name: z.string(),
    created: seconds,
    algorithm: z.string(),
    metrics: z.record(z.string(), z.number()),
    label: z.nullable(z.string()),
    description: z.nullable(z.string()),
    status: z.enum(['Trained', 'Approved']),
    validation: z.nullable(z.record(z.string(), z.unknown())),
    promotion: z.nullable(promotion),
    endpoints: z.array(z.string()),
  }),
  "A trained version (never reused). `endpoints`: the serving endpoints it is promoted to; `promotion`: the template's auto-promotion decision, once made.",
);

const sideBySide = z.strictObject({
  name: z.string(),
  higher_is_better: z.nullable(z.boolean()),
  values: z.record(z.string(), z.nullable(z.number())),
  best: z.nullable(z.array(recordId)),
});
export const modelComparison = named('ModelComparison', z.strictObject({ versions: z.array(recordId), models: z.array(modelVersion), metrics: z.array(sideBySide), validation: z.array(sideBySide) }));

export const erasure = named('UserErasure', z.strictObject({ user_id: z.string(), deleted_events: z.int(), model_versions_rewritten: z.int() }));

export const eventTypeList = named('EventTypeList', platformPage(eventType));
export const contextList = named('ContextList', platformPage(context));
export const templateList = named('TemplateList', platformPage(template));
export const endpointList = named('ModelEndpointList', platformPage(endpoint));
export const jobList = named('TrainingJobList', platformPage(job));
export const modelList = named('ModelVersionList', platformPage(modelVersion));
