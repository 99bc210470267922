import type { z } from 'zod/mini';
import { nowSeconds } from '../clock.ts';
import type * as S from '../schemas/console.ts';
import { newId, notFound, recordPage, storedBefore, type ConsoleRecord, type ConsoleStore } from './console-records.ts';
import type { IdPlan } from './types.ts';

/** Contexts: the places an app serves recommendations or search in (the control plane's rules and experiments attach to them). */

export interface Context extends ConsoleRecord {
  name: string;
  description: string;
  created: number;
}

export async function createContext(c: ConsoleStore, tenant: string, b: z.output<typeof S.contextBody>, ids?: IdPlan) {
  const done = await storedBefore<Context>(c, tenant, 'context', ids);
  if (done) return done;
  const rec: Context = { id: await newId(() => c.nextId(tenant, 'context'), ids), name: b.name, description: b.description, created: nowSeconds() };
  // The marker first: serving knows a context (its control Query lists it) once it is answered.
  await c.putContextMarker(tenant, rec.id);
  await c.put(tenant, 'context', rec);
  return rec;
}
export const listContexts = (c: ConsoleStore, tenant: string, q: S.RecordPageQuery) => recordPage(c, tenant, 'context', { limit: q.limit, after: q.starting_after }, (r: Context) => r);
export async function getContext(c: ConsoleStore, tenant: string, id: number): Promise<Context> {
  const r = await c.get<Context>(tenant, 'context', id);
  if (!r) throw notFound('context', id);
  return r;
}
