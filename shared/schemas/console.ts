import * as z from 'zod';

const name = z.string().min(1).max(256);
export const idPath = z.object({ id: z.string().regex(/^[1-9][0-9]{0,15}$/, 'id must be a positive integer').transform(Number) });

export const eventTypeBody = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'name must match ^[a-z][a-z0-9_]{0,63}$ (the type string sent in events)'),
  weight: z.int('weight must be an integer').min(1).max(100),
});
export const eventTypePatch = z.strictObject({ weight: z.int('weight must be an integer').min(1).max(100) });

export const contextBody = z.strictObject({ name, description: z.string().max(2000).optional().default('') });

const thresholds = z.strictObject({ per_signal_min: z.number().min(0), total_min: z.number().min(0) });
const templateEventTypes = z.array(z.strictObject({ id: z.int().positive(), weight: z.number().min(1).max(100) })).min(1).max(50);

export const templateBody = z.strictObject({
  name,
  event_types: templateEventTypes,
  thresholds: thresholds.optional().default({ per_signal_min: 0, total_min: 0 }),
});
export const templatePatch = z
  .strictObject({
    name: name.optional(),
    event_types: templateEventTypes.optional(),
    thresholds: thresholds.optional(),
    status: z.enum(['Draft', 'Published']).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'Supply at least one field.');

export const endpointBody = z.strictObject({
  endpoint_name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'endpoint_name: 1-64 letters, digits, _ or -'),
  is_default: z.boolean().optional().default(false),
});

export const ALGORITHMS = ['ease', 'item_knn', 'bpr', 'popularity'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

export const trainingJobBody = z.strictObject({
  template_id: z.int().positive(),
  options: z
    .strictObject({
      epochs: z.int().min(1).max(50).optional().default(5),
      batch_size: z.union([z.literal(64), z.literal(128), z.literal(256), z.literal(512)], { error: 'batch_size must be 64, 128, 256 or 512' }).optional().default(256),
      learning_rate: z.number().positive().max(1).optional().default(0.001),
      algorithm: z.enum(ALGORITHMS).optional().default('ease'),
    })
    .optional()
    .default({ epochs: 5, batch_size: 256, learning_rate: 0.001, algorithm: 'ease' }),
});
export type TrainingJobBody = z.output<typeof trainingJobBody>;
export type TrainingOptions = TrainingJobBody['options'];

export const jobNamePath = z.object({ jobName: z.string().regex(/^train-[1-9][0-9]{0,15}$/, 'jobName is malformed') });
export const versionPath = z.object({ version: z.string().regex(/^[1-9][0-9]{0,15}$/, 'version must be a positive integer').transform(Number) });
export const modelPatch = z
  .strictObject({ label: z.string().max(256).nullable().optional(), description: z.string().max(2000).nullable().optional() })
  .refine((b) => Object.keys(b).length > 0, 'Supply label or description.');
export const promoteBody = z.strictObject({ endpoint_name: endpointBody.shape.endpoint_name });
export const logsQuery = z.strictObject({ cursor: z.string().min(1).max(100).optional(), limit: z.string().regex(/^[0-9]+$/).transform(Number).pipe(z.int().min(1).max(1000)).optional().default(200) });
