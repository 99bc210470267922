import * as z from 'zod/mini';
import { numericId } from './common.ts'; // and English messages for zod/mini

const name = z.string().check(z.minLength(1), z.maxLength(256));
/** Ids past 2^53 - 1 are refused (as on the Core routes), not rounded to a neighbouring id. */
export const idPath = z.object({ id: numericId('id') });

export const eventTypeBody = z.strictObject({
  name: z.string().check(z.regex(/^[a-z][a-z0-9_]{0,63}$/, 'name must match ^[a-z][a-z0-9_]{0,63}$ (the type string sent in events)')),
  weight: z.int('weight must be an integer').check(z.gte(1), z.lte(100)),
});
export const eventTypePatch = z.strictObject({ weight: z.int('weight must be an integer').check(z.gte(1), z.lte(100)) });

export const contextBody = z.strictObject({ name, description: z._default(z.optional(z.string().check(z.maxLength(2000))), '') });

const thresholds = z.strictObject({ per_signal_min: z.number().check(z.gte(0)), total_min: z.number().check(z.gte(0)) });
/**
 * A template's event types: `weight` multiplies the event type's own weight (1 to 100) in the
 * runs trained from it (default 1: the event type's weight as it is).
 */
const templateEventTypes = z
  .array(z.strictObject({ id: z.int().check(z.positive()), weight: z.optional(z.number().check(z.gte(1), z.lte(100))) }))
  .check(z.minLength(1), z.maxLength(50));

export const templateBody = z.strictObject({
  name,
  event_types: templateEventTypes,
  thresholds: z._default(z.optional(thresholds), { per_signal_min: 0, total_min: 0 }),
});
export const templatePatch = z
  .strictObject({
    name: z.optional(name),
    event_types: z.optional(templateEventTypes),
    thresholds: z.optional(thresholds),
    status: z.optional(z.enum(['Draft', 'Published'])),
  })
  .check(z.refine((b) => Object.keys(b).length > 0, 'Supply at least one field.'));

export const endpointBody = z.strictObject({
  endpoint_name: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'endpoint_name: 1-64 letters, digits, _ or -')),
  is_default: z._default(z.optional(z.boolean()), false),
});

export const ALGORITHMS = ['ease', 'item_knn', 'bpr', 'popularity'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

export const trainingJobBody = z.strictObject({
  template_id: z.int().check(z.positive()),
  options: z._default(
    z.optional(
      z.strictObject({
        epochs: z._default(z.optional(z.int().check(z.gte(1), z.lte(50))), 5),
        batch_size: z._default(
          z.optional(z.union([z.literal(64), z.literal(128), z.literal(256), z.literal(512)], { error: 'batch_size must be 64, 128, 256 or 512' })),
          256,
        ),
        learning_rate: z._default(z.optional(z.number().check(z.positive(), z.lte(1))), 0.001),
        algorithm: z._default(z.optional(z.enum(ALGORITHMS)), 'ease'),
      }),
    ),
    { epochs: 5, batch_size: 256, learning_rate: 0.001, algorithm: 'ease' },
  ),
});
export type TrainingJobBody = z.output<typeof trainingJobBody>;
export type TrainingOptions = TrainingJobBody['options'];

/** A job name is opaque to a client: any name that is not one of the tenant's jobs is a 404 (see getJob). */
export const jobNamePath = z.object({ jobName: z.string().check(z.minLength(1)) });
export const versionPath = z.object({ version: numericId('version') });
export const modelPatch = z
  .strictObject({
    label: z.optional(z.nullable(z.string().check(z.maxLength(256)))),
    description: z.optional(z.nullable(z.string().check(z.maxLength(2000)))),
  })
  .check(z.refine((b) => Object.keys(b).length > 0, 'Supply label or description.'));
export const promoteBody = z.strictObject({ endpoint_name: endpointBody.shape.endpoint_name });
export const logsQuery = z.strictObject({
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
  limit: z._default(
    z.optional(z.pipe(z.pipe(z.string().check(z.regex(/^[0-9]+$/)), z.transform(Number)), z.int().check(z.gte(1), z.lte(1000)))),
    200,
  ),
});
