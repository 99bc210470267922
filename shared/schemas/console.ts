import * as z from 'zod/mini';
import {
  between,
  displayName,
  intBetween,
  intOf,
  intParam,
  kindOf,
  missingOr,
  ONE_LINE_DOC,
  plainInt,
  numericId,
  oneLineOnly,
  recordDescription,
  STORABLE_RANGE_DOC,
  storableNumber,
} from './common.ts'; // and English messages for zod/mini
import { documentAs, documentChecks } from './doc.ts';
import { NotFound } from '../domain/errors.ts';
import { EVENT_TYPE_PATTERN, RESERVED_EVENT_FIELDS } from './events.ts';

const name = displayName;
/** Ids past 2^53 - 1 are refused (as on the Core routes), not rounded to a neighbouring id. */
export const idPath = z.object({ id: numericId('id', (digits) => new NotFound('not_found', `No record with id ${digits}.`)) });

export const eventTypeBody = z.strictObject({
  // The type string sent in events: what ingest accepts as an event's `type`, or no event could carry it.
  name: z.string().check(
    z.regex(EVENT_TYPE_PATTERN, 'name must match ^[a-z][a-z0-9_]{0,63}$ (the type string sent in events)'),
    z.refine((t) => !RESERVED_EVENT_FIELDS.has(t), `name may not be a field name of the event resource (${[...RESERVED_EVENT_FIELDS].join(', ')}): no event could carry it as its type`),
    // An event's payload sits under its type, as an object key: one named constructor cannot be stored.
    z.refine((t) => t !== 'constructor', 'name may not be constructor: an event carries its payload under its type, and no object key may be named constructor'),
  ),
  weight: intBetween('weight', 1, 100),
});
export const eventTypePatch = z.strictObject({ weight: intBetween('weight', 1, 100) });

/**
 * A page of a console list (contexts, event types, templates, endpoints, training jobs, versions):
 * `limit` 1–100, default 100 (these lists answered every record before they paged), and
 * `starting_after`, the `next_cursor` of the page before (the last record's id, a job's name).
 */
const recordLimit = documentAs(z._default(z.optional(intParam(1, 100)), 100), z._default(z.optional(z.int().check(z.gte(1), z.lte(100))), 100));
export const recordPageQuery = z.strictObject({ limit: recordLimit, starting_after: z.optional(numericId('starting_after')) });
export type RecordPageQuery = z.output<typeof recordPageQuery>;
/** A training run's status (api-decisions), each run in one. */
export const JOB_STATUSES = ['Queued', 'InProgress', 'Stopping', 'Stopped', 'Completed', 'Failed'] as const;
/** `GET /api/training-jobs`: a page, newest first, of every run or (`status`) of the runs in one status. */
export const jobPageQuery = z.strictObject({
  limit: recordLimit,
  starting_after: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
  status: z.optional(z.enum(JOB_STATUSES, `status must be one of ${JOB_STATUSES.join(', ')}`)),
});

export const contextBody = z.strictObject({ name, description: z._default(z.optional(recordDescription), '') });

/** A threshold: storableNumber's bound documented (until 2026-12-08 the document took any number from 0, 1e20 included, which is 400). */
const threshold = (field: string) => documentChecks(storableNumber(field).check(z.gte(0, `${field} must not be negative`)), STORABLE_RANGE_DOC);
const thresholds = z.strictObject({
  per_signal_min: threshold('per_signal_min'),
  total_min: threshold('total_min'),
});
/**
 * A template's event types: `weight` multiplies the event type's own weight (1 to 100) in the
 * runs trained from it (default 1: the event type's weight as it is). Every number DynamoDB cannot
 * store is out of that range, said alone (until 2026-12-08 also "cannot be stored: use 0 or ...").
 */
const templateEventTypes = z
  .array(z.strictObject({ id: plainInt('Must be greater than 0.').check(z.positive()), weight: z.optional(z.number({ error: kindOf('weight', 'a number') }).check(...between('weight', 1, 100))) }))
  .check(
    z.minLength(1),
    z.maxLength(50),
    // One weight per event type: a second entry for the same type would leave which one counts to chance.
    z.refine((v) => new Set(v.map((e) => e.id)).size === v.length, 'name each event type once'),
  );

/** `PATCH /api/model-endpoints/{id}`: makes it the default (the default moves; it is never unset). */
export const endpointPatch = z.strictObject({
  // Not sent (`{}`): said to be required, not "can only be set to true" (until 2026-12-08), as if false had been sent.
  is_default: z.literal(true, {
    error: missingOr(
      'is_default is required: send {"is_default": true} to make this endpoint the default',
      'is_default can only be set to true: to move the default, make another endpoint the default',
    ),
  }),
});

export const endpointBody = z.strictObject({
  endpoint_name: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, '1-64 letters, digits, _ or -')),
  is_default: z._default(z.optional(z.boolean()), false),
});

/**
 * `auto` (the default): EASE and iALS blended, each run choosing EASE's λ (and whether to weigh
 * its co-occurrence by time), iALS's epochs and the blend weight on a validation split of its own
 * events (shared/recs/tuning.ts): 1.075 x the best plain EASE on ml-latest-small and 1.060 x on
 * Last.fm (bench:recs, README), for minutes of training where EASE takes seconds. `ease`: EASE
 * alone, λ 300. `item_knn`, `bpr`, `popularity`: the baselines.
 */
export const ALGORITHMS = ['auto', 'ease', 'item_knn', 'bpr', 'popularity'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/** The options of a run that names none. */
export const DEFAULT_TRAINING_OPTIONS = { epochs: 5, batch_size: 256, learning_rate: 0.001, algorithm: 'auto' } as const;
/** A run's options: what `POST /api/training-jobs` takes, and what a template's schedule starts its runs with. */
const trainingOptions = z._default(
  z.optional(
    z.strictObject({
      epochs: z._default(z.optional(plainInt('Must be at least 1.', 'Must be at most 50.').check(z.gte(1), z.lte(50))), 5),
      batch_size: z._default(z.optional(z.union([z.literal(64), z.literal(128), z.literal(256), z.literal(512)], { error: 'batch_size must be 64, 128, 256 or 512' })), 256),
      learning_rate: z._default(
        z.optional(
          storableNumber('learning_rate', 'use a value from 1e-130 to 1').check(z.positive('learning_rate must be above 0 and at most 1'), z.lte(1, 'learning_rate must be above 0 and at most 1')),
        ),
        0.001,
      ),
      algorithm: z._default(z.optional(z.enum(ALGORITHMS)), DEFAULT_TRAINING_OPTIONS.algorithm),
    }),
  ),
  { ...DEFAULT_TRAINING_OPTIONS },
);
export const trainingJobBody = z.strictObject({
  template_id: plainInt('Must be greater than 0.').check(z.positive()),
  options: trainingOptions,
});
export type TrainingJobBody = z.output<typeof trainingJobBody>;
export type TrainingOptions = TrainingJobBody['options'];

/** Named intervals of a schedule, in hours. */
export const EVERY_HOURS = { hourly: 1, daily: 24, weekly: 168 } as const;
/**
 * A template's schedule: `every` (hourly, daily, weekly) or `every_hours` (1 to 8760), from
 * `start_at` (unix seconds; default: one interval from now), each run with `options` (as
 * `POST /api/training-jobs` takes them). null removes it.
 */
const schedule = documentChecks(
  z
    .strictObject({
      every: z.optional(z.enum(['hourly', 'daily', 'weekly'])),
      every_hours: z.optional(intBetween('every_hours', 1, 8760)),
      start_at: z.optional(
        intOf('start_at', 'an integer (unix seconds)', 'start_at must be a positive time in Unix seconds', 'start_at must be at most 4102444800 (2100-01-01)').check(
          z.positive('start_at must be a positive time in Unix seconds'),
          z.lte(4_102_444_800, 'start_at must be at most 4102444800 (2100-01-01)'),
        ),
      ),
      options: trainingOptions,
    })
    .check(z.refine((s) => (s.every === undefined) !== (s.every_hours === undefined), 'Send either every (hourly, daily, weekly) or every_hours.')),
  // The refinement, as JSON Schema says it (until 2026-12-08 the document took `{}` and both at once, which are 400).
  { oneOf: [{ required: ['every'] }, { required: ['every_hours'] }] },
);
export type ScheduleBody = z.output<typeof schedule>;
/**
 * A template's auto-promotion policy: when a run from it completes, its version is promoted to
 * `endpoint_name` if its validation nDCG@10 is at least `min_factor` times the serving version's.
 */
const autoPromote = z.strictObject({
  endpoint_name: endpointBody.shape.endpoint_name,
  min_factor: z._default(
    z.optional(storableNumber('min_factor', 'use a value from 1e-130 to 10').check(z.positive('min_factor must be above 0 and at most 10'), z.lte(10, 'min_factor must be above 0 and at most 10'))),
    1,
  ),
});
export type AutoPromoteBody = z.output<typeof autoPromote>;

export const templateBody = z.strictObject({
  name,
  event_types: templateEventTypes,
  thresholds: z._default(z.optional(thresholds), { per_signal_min: 0, total_min: 0 }),
  schedule: z._default(z.optional(z.nullable(schedule)), null),
  auto_promote: z._default(z.optional(z.nullable(autoPromote)), null),
});
/** Fields a Published template still takes: when it trains and what happens to its versions, not what they train on. */
export const TEMPLATE_AUTOMATION_FIELDS = ['schedule', 'auto_promote'] as const;
export const templatePatch = documentChecks(
  z
    .strictObject({
      name: z.optional(name),
      event_types: z.optional(templateEventTypes),
      thresholds: z.optional(thresholds),
      status: z.optional(z.enum(['Draft', 'Published'])),
      schedule: z.optional(z.nullable(schedule)),
      auto_promote: z.optional(z.nullable(autoPromote)),
    })
    .check(z.refine((b) => Object.keys(b).length > 0, 'Supply at least one field.')),
  { minProperties: 1 },
);

/**
 * `?versions=3,4`: 2 to 10 distinct version numbers, kept as their digits. Any positive integer is
 * well formed (the spec's range is x >= 1): one past the largest a version can have is a version
 * the tenant does not have, which the comparison answers 404 naming the digits as sent.
 */
export const compareQuery = z.strictObject({
  versions: documentAs(
    z
      .pipe(
        z.string({ error: 'versions is required (e.g. versions=3,4)' }).check(z.regex(/^[1-9][0-9]*(,[1-9][0-9]*)*$/, 'comma-separated version numbers, e.g. 3,4')),
        z.transform((s: string) => s.split(',')),
      )
      .check(
        z.refine((v) => v.length >= 2 && v.length <= 10, 'name 2 to 10 versions'),
        // Digits without a leading zero: the same number is the same text.
        z.refine((v) => new Set(v).size === v.length, 'name each version once'),
      ),
    z.string().check(z.regex(/^[1-9][0-9]*(,[1-9][0-9]*){1,9}$/)),
  ),
});

/** A user id as events carry it (1 to 256 characters). */
export const userPath = z.object({ user_id: z.string().check(z.minLength(1), z.maxLength(256)) });

/** A job name is opaque to a client: any name that is not one of the tenant's jobs is a 404 (see getTrainingRun). */
export const jobNamePath = z.object({ jobName: z.string().check(z.minLength(1)) });
export const versionPath = z.object({ version: numericId('version', (digits) => new NotFound('model_version_not_found', `No model version ${digits}.`)) });
export const modelPatch = documentChecks(
  z
    .strictObject({
      // A label is one line the console shows beside the version, as a name is (null clears it; "" shows none).
      label: z.optional(
        z.nullable(
          documentChecks(z.string({ error: 'label must be a string, or null to clear it' }).check(z.maxLength(256, 'label must be at most 256 characters'), oneLineOnly('label')), ONE_LINE_DOC),
        ),
      ),
      // Each message names its field, as a name's and a context's description do (they were zod's own: 'Must have at most 2000 characters.').
      description: z.optional(z.nullable(z.string({ error: 'description must be a string, or null to clear it' }).check(z.maxLength(2000, 'description must be at most 2000 characters')))),
    })
    .check(z.refine((b) => Object.keys(b).length > 0, 'Supply label or description.')),
  { minProperties: 1 },
);
export const promoteBody = z.strictObject({ endpoint_name: endpointBody.shape.endpoint_name });
export const logsQuery = z.strictObject({
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
  limit: documentAs(z._default(z.optional(intParam(1, 1000)), 200), z._default(z.optional(z.int().check(z.gte(1), z.lte(1000))), 200)),
});
