import { useEffect, useState, type FormEvent } from 'react';
import { api, qs, type Rerank } from '../api.ts';
import { BusyButton, Card, Check, Field, PageHeader, Problem, useAction, useLoad } from '../ui.tsx';
import { ContextPicker, useChosenContext, isAdmin, useContexts } from './common.tsx';
import type { PageProps } from './index.tsx';

const KEYS = ['diversity', 'popularity_weight', 'freshness_weight', 'max_per_category'] as const;
const LABELS: Record<(typeof KEYS)[number], string> = {
  diversity: 'Diversity (0–1)',
  popularity_weight: 'Popularity weight',
  freshness_weight: 'Freshness weight',
  max_per_category: 'Max items per category',
};

export function RerankPage({ session }: PageProps) {
  const contexts = useContexts();
  const [contextId, setContextId] = useChosenContext();
  const ctx = contextId || String(contexts.data?.data[0]?.id ?? '');
  const current = useLoad(() => (ctx ? api<Rerank>('GET', `/api/rerank-controls${qs({ contextId: ctx })}`) : Promise.resolve(undefined)), [ctx]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [excludeSeen, setExcludeSeen] = useState(false);
  const a = useAction();
  const [saved, setSaved] = useState(false);
  // "Saved." belongs to the context it was said of.
  // biome-ignore lint/correctness/useExhaustiveDependencies: cleared whenever another context is shown.
  useEffect(() => setSaved(false), [ctx]);
  useEffect(() => {
    const c = current.data;
    if (!c) return;
    setValues(Object.fromEntries(KEYS.map((k) => [k, c[k] === null || c[k] === undefined ? '' : String(c[k])])));
    setExcludeSeen(Boolean(c.exclude_seen));
  }, [current.data]);

  const save = (e: FormEvent) => {
    e.preventDefault();
    if (a.busy) return;
    setSaved(false);
    void a.run(async () => {
      const body: Record<string, unknown> = {};
      for (const k of KEYS) if (values[k]) body[k] = Number(values[k]);
      if (excludeSeen) body.exclude_seen = true;
      await api('PUT', `/api/rerank-controls${qs({ contextId: ctx })}`, body);
      setSaved(true);
      current.reload();
    });
  };
  return (
    <>
      <PageHeader title="Rerank controls" />
      <Card>
        <ContextPicker value={ctx} onChange={setContextId} contexts={contexts.data?.data ?? []} error={contexts.error} />
        <Problem error={current.error} />
      </Card>
      {ctx ? (
        <Card title="Controls of this context">
          <form onSubmit={save} aria-label="Rerank controls">
            <div className="inline">
              {KEYS.map((k) => (
                <Field key={k} label={LABELS[k]} type="number" step="any" min={0} value={values[k] ?? ''} onChange={(v) => setValues((x) => ({ ...x, [k]: v }))} hint="empty: unset" />
              ))}
              <Check label="Exclude items the user has seen" checked={excludeSeen} onChange={setExcludeSeen} />
            </div>
            {isAdmin(session.role) ? (
              <BusyButton type="submit" className="primary" busy={a.busy}>
                Save controls
              </BusyButton>
            ) : null}
            <Problem error={a.error} />
            {saved ? <p role="status">Saved.</p> : null}
          </form>
        </Card>
      ) : null}
    </>
  );
}
