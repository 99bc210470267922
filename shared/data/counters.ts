import type { IdPlan } from '../domain/types.ts';
import type { TableRef } from './client.ts';
import { Counter } from './entities.ts';
import { update } from './ops.ts';

/**
 * Allocates `count` consecutive per-tenant ids with one atomic ADD and returns the first.
 * A batch takes a block, so a 500-event request costs one counter write.
 */
export async function allocateIds(t: TableRef, tenant: string, name: string, count: number): Promise<number> {
  const out = await update(t, Counter.key({ tenant, counter: name }), { add: { value: count } }, { returnValues: 'UPDATED_NEW' });
  const last = Number(out?.value);
  return last - count + 1;
}

/**
 * The first of `count` ids for a create: those an earlier attempt of the same request reserved,
 * or fresh ones, reported to `ids.reserved` before the caller writes any row.
 */
export async function idsFor(t: TableRef, tenant: string, name: string, count: number, ids: IdPlan | undefined): Promise<number> {
  if (ids?.reuse !== undefined) return ids.reuse;
  const first = await allocateIds(t, tenant, name, count);
  await ids?.reserved?.(first);
  return first;
}
