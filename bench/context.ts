/**
 * The control-plane load of bench:recs and bench:search: a context holding 20 rules (promoting,
 * demoting, excluding, segment-scoped, disabled, windowed), rerank controls and a running
 * two-variant experiment, measured side by side with the same requests without a context.
 */
import type autocannon from 'autocannon';
import type { BenchStack } from './stack.ts';

export interface ContextSetup {
  contextId: number;
  /** Users the requests name: each has events (some in the segment the scoped rules use). */
  users: string[];
}

/** Rule conditions on a metadata key with values from the catalog (promote, demote, exclude). */
export async function setUpContext(s: BenchStack, o: { endpoints: [string, string]; key: string; values: string[]; eventType: string; itemIds: string[]; users?: string[] }): Promise<ContextSetup> {
  const ok = (r: { status: number; body: unknown }, what: string) => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: number };
  };
  const ctx = ok(await s.platform('POST', '/api/contexts', { name: 'bench placement' }), 'context').id;
  // The variants' endpoints (a bench that serves a model has made them already).
  for (const [k, name] of o.endpoints.entries()) {
    const r = await s.platform('POST', '/api/model-endpoints', { endpoint_name: name, is_default: k === 0 });
    if (r.status !== 409) ok(r, 'endpoint');
  }
  const segment = ok(await s.platform('POST', '/api/segments', { name: 'bench regulars', definition: { event_type: o.eventType, min_count: 3, within_days: 365 } }), 'segment').id;
  const v = (k: number) => o.values[k % o.values.length] as string;
  const now = Math.floor(Date.now() / 1000);
  const field = `metadata.${o.key}`;
  const rules: Record<string, unknown>[] = [
    ...Array.from({ length: 6 }, (_, k) => ({ name: `promote ${v(k)}`, conditions: [{ field, op: 'eq', value: v(k) }], boost: 1.2 + k / 10 })),
    ...Array.from({ length: 4 }, (_, k) => ({
      name: `demote ${v(k + 6)}`,
      conditions: [
        { field, op: 'eq', value: v(k + 6) },
        { field: 'created', op: 'lte', value: now },
      ],
      boost: 0.5,
    })),
    ...Array.from({ length: 2 }, (_, k) => ({ name: `exclude ${v(k + 10)}`, conditions: [{ field, op: 'eq', value: v(k + 10) }], boost: 0 })),
    ...Array.from({ length: 3 }, (_, k) => ({ name: `regulars like ${v(k + 12)}`, segment_id: segment, conditions: [{ field, op: 'in', value: [v(k + 12), v(k + 13)] }], boost: 2 })),
    ...Array.from({ length: 2 }, (_, k) => ({ name: `paused ${k}`, enabled: false, conditions: [{ field, op: 'neq', value: v(k) }], boost: 3 })),
    ...Array.from({ length: 3 }, (_, k) => ({
      name: `campaign ${k}`,
      starts_at: now - 3600,
      ends_at: now + 86_400 * (k + 1),
      conditions: [
        { field, op: 'exists', value: true },
        { field, op: 'neq', value: v(k + 3) },
      ],
      boost: 1.1,
    })),
  ];
  for (const r of rules) ok(await s.platform('POST', '/api/rules', { context_id: ctx, ...r }), 'rule');
  ok(await s.platform('PUT', `/api/rerank-controls?contextId=${ctx}`, { diversity: 0.2, freshness_weight: 0.1, max_per_category: 5 }), 'rerank controls');
  const exp = ok(
    await s.platform('POST', '/api/experiments', {
      name: 'bench A/B',
      context_id: ctx,
      variants: [
        { name: 'a', endpoint_name: o.endpoints[0], traffic_percent: 50 },
        { name: 'b', endpoint_name: o.endpoints[1], traffic_percent: 50 },
      ],
    }),
    'experiment',
  ).id;
  ok(await s.platform('PATCH', `/api/experiments/${exp}`, { status: 'Running' }), 'experiment start');
  // Users with events: every other one is a regular (in the segment).
  const users = o.users ?? Array.from({ length: 200 }, (_, u) => `bench-user-${u}`);
  if (!o.users) {
    const events = users.flatMap((user, u) => Array.from({ length: u % 2 === 0 ? 4 : 1 }, (_, k) => ({ type: o.eventType, user_id: user, item_id: o.itemIds[(u * 7 + k * 13) % o.itemIds.length] })));
    for (let i = 0; i < events.length; i += 500) ok(await s.core('POST', '/v1/events', events.slice(i, i + 500)), 'events');
  }
  return { contextId: ctx, users };
}

export interface Latency {
  p50_ms: number;
  p99_ms: number;
  rps: number;
  errors: number;
}
const latencyOf = (m: autocannon.Result): Latency => ({ p50_ms: m.latency.p50, p99_ms: m.latency.p99, rps: Math.round(m.requests.average), errors: m.errors + m.timeouts + m.non2xx });

/**
 * The same load without and with the context, alternated `rounds` times (these machines are
 * noisy: each side gets every phase), after one warm-up of each. p99 is the mean of the rounds'.
 */
export async function sideBySide(load: (contextId: number | undefined, duration: number) => Promise<autocannon.Result>, contextId: number, duration: number, warmup: number, rounds = 2) {
  await load(undefined, warmup);
  await load(contextId, warmup);
  const plain: Latency[] = [];
  const withContext: Latency[] = [];
  for (let r = 0; r < rounds; r++) {
    plain.push(latencyOf(await load(undefined, duration)));
    withContext.push(latencyOf(await load(contextId, duration)));
  }
  const avg = (xs: Latency[]): Latency => ({
    p50_ms: Number((xs.reduce((a, x) => a + x.p50_ms, 0) / xs.length).toFixed(1)),
    p99_ms: Number((xs.reduce((a, x) => a + x.p99_ms, 0) / xs.length).toFixed(1)),
    rps: Math.round(xs.reduce((a, x) => a + x.rps, 0) / xs.length),
    errors: xs.reduce((a, x) => a + x.errors, 0),
  });
  const a = avg(plain);
  const b = avg(withContext);
  return { without_context: a, with_context: b, rounds: { without_context: plain, with_context: withContext }, p99_ratio: Number((b.p99_ms / Math.max(a.p99_ms, 1e-9)).toFixed(3)) };
}

export type SideBySide = Awaited<ReturnType<typeof sideBySide>>;

/** Markdown lines for the README and bench-results. */
export function sideBySideRows(what: string, r: SideBySide, connections: number): string[] {
  return [
    `${what} at ${connections} concurrent clients, the same requests without and with a context (20 rules, rerank controls, a running two-variant experiment), alternated ${r.rounds.with_context.length} times:`,
    '',
    '| requests | p50 ms | p99 ms | req/s | errors |',
    '|---|---:|---:|---:|---:|',
    `| without a context | ${r.without_context.p50_ms} | ${r.without_context.p99_ms} | ${r.without_context.rps} | ${r.without_context.errors} |`,
    `| with the context | ${r.with_context.p50_ms} | ${r.with_context.p99_ms} | ${r.with_context.rps} | ${r.with_context.errors} |`,
    '',
    `p99 with ÷ without: ${r.p99_ratio} (target <= 1.2: ${r.p99_ratio <= 1.2 ? 'met' : 'NOT met'}).`,
  ];
}
