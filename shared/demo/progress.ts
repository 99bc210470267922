import { existsSync, readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import { replaceFile } from '../files.ts';
import { errorMessage } from '../domain/errors.ts';

/**
 * The demo seed's record of itself (`$DATA_DIR/demo.json`): what it seeds, and how far it got.
 * It is written when the tenant is created, so an interrupted seed resumes on the next start
 * (the batches stored before are written again under the ids they took, which stores only the
 * rows missing) and a finished one is never repeated.
 */
const batch = z.object({ first: z.int(), done: z.boolean() });
const progressSchema = z.object({
  version: z.literal(1),
  status: z.enum(['seeding', 'done']),
  size: z.object({ items: z.int(), users: z.int(), events: z.int() }),
  seed: z.int(),
  /** The generator's clock (unix seconds): events fall in the days before it. */
  now: z.int(),
  /** Per batch index: the first id it took, and whether every row of it is stored. */
  items: z.record(z.string(), batch),
  events: z.record(z.string(), batch),
  job_name: z.nullable(z.string()),
  model_version: z.nullable(z.int()),
  /** Whether the shoppers' searches (searches.ts) were made; absent in records of seeds from before them. */
  searched: z.optional(z.boolean()),
  /** How far the shoppers' searches got (searches.ts, DemoSearchProgress); absent before they begin. */
  searches: z.optional(
    z.object({
      made: z.int(),
      without_results: z.int(),
      events: z.object({ view: z.int(), add_to_cart: z.int(), purchase: z.int() }),
      follow: z.nullable(z.object({ events: z.array(z.record(z.string(), z.unknown())), first: z.nullable(z.int()) })),
    }),
  ),
  seconds: z.nullable(z.number()),
});
export type DemoProgress = z.output<typeof progressSchema>;

/**
 * The record, undefined when there is none. One that is not JSON (cut short) or not a record
 * throws a DamagedProgress saying what to do: only removing the data directory seeds the demo
 * again (without demo.json a start that finds credentials seeds nothing). Until 2026-12-05 a file
 * that was not JSON threw a bare SyntaxError, and the hint said to remove demo.json, which turns
 * the demo off.
 */
export function readProgress(file: string): DemoProgress | undefined {
  if (!existsSync(file)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new DamagedProgress(file, e instanceof SyntaxError ? `not JSON: ${e.message}` : `cannot be read: ${errorMessage(e)}`);
  }
  const parsed = progressSchema.safeParse(value);
  if (!parsed.success) throw new DamagedProgress(file, `not a demo seed record: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

export class DamagedProgress extends Error {
  override name = 'DamagedProgress';
  constructor(file: string, problem: string) {
    super(`${file} is damaged (${problem}); remove the data directory to start afresh`);
  }
}

/** Written whole to a new file, then renamed over the old one: a crash leaves one or the other. */
export function writeProgress(file: string, p: DemoProgress): void {
  replaceFile(file, `${JSON.stringify(p, null, 2)}\n`);
}

export function newProgress(size: DemoProgress['size'], seed: number, now: number): DemoProgress {
  return { version: 1, status: 'seeding', size: { ...size }, seed, now, items: {}, events: {}, job_name: null, model_version: null, seconds: null };
}
