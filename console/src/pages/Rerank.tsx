import { useEffect, useState, type FormEvent } from 'react';
import { api, qs, type Rerank } from '../api.ts';
import { BusyButton, Card, Check, Field, Loading, PageHeader, Problem, useAction, useLoad } from '../ui.tsx';
import { ContextPicker, useChosenContext, isAdmin, NoContexts, useContexts } from './common.tsx';
import type { PageProps } from './index.tsx';

const KEYS = ['diversity', 'popularity_weight', 'freshness_weight', 'max_per_category'] as const;
const LABELS: Record<(typeof KEYS)[number], string> = {
  diversity: 'Diversity (0–1)',
  popularity_weight: 'Popularity weight',
  freshness_weight: 'Freshness weight',
  max_per_category: 'Max items per category',
};

const shown = (c: Rerank) => Object.fromEntries(KEYS.map((k) => [k, c[k] === null || c[k] === undefined ? '' : String(c[k])]));

/** The controls of one context as read, and (for admins) saved to it: made anew for each context (`key`), so no other context's values are shown or saved. */
function ControlsForm({ ctx, controls, admin, onSaved }: { ctx: string; controls: Rerank; admin: boolean; onSaved: () => void }) {
  const [values, setValues] = useState<Record<string, string>>(() => shown(controls));
  const [excludeSeen, setExcludeSeen] = useState(Boolean(controls.exclude_seen));
  const a = useAction();
  const [saved, setSaved] = useState(false);
  // Read again after a save: the form shows what is stored.
  useEffect(() => {
    setValues(shown(controls));
    setExcludeSeen(Boolean(controls.exclude_seen));
  }, [controls]);

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
      onSaved();
    });
  };
  return (
    <form onSubmit={save} aria-label="Rerank controls">
      <div className="inline">
        {/* A viewer reads them: fields that took edits with nothing to save them would look usable (until 2026-12-06 they did). */}
        {KEYS.map((k) => (
          <Field key={k} label={LABELS[k]} type="number" step="any" min={0} value={values[k] ?? ''} onChange={(v) => setValues((x) => ({ ...x, [k]: v }))} hint="empty: unset" disabled={!admin} />
        ))}
        <Check label="Exclude items the user has seen" checked={excludeSeen} onChange={setExcludeSeen} disabled={!admin} />
      </div>
      {admin ? (
        <BusyButton type="submit" className="primary" busy={a.busy}>
          Save controls
        </BusyButton>
      ) : (
        <p className="muted">Only admins change rerank controls.</p>
      )}
      <Problem error={a.error} />
      {saved ? <p role="status">Saved.</p> : null}
    </form>
  );
}

export function RerankPage({ session }: PageProps) {
  const contexts = useContexts();
  const [contextId, setContextId] = useChosenContext();
  const ctx = contextId || String(contexts.data?.data[0]?.id ?? '');
  const current = useLoad(() => (ctx ? api<Rerank>('GET', `/api/rerank-controls${qs({ contextId: ctx })}`) : Promise.resolve(undefined)), [ctx]);
  return (
    <>
      <PageHeader title="Rerank controls" />
      <Card>
        {!ctx && contexts.data ? <NoContexts admin={isAdmin(session.role)} /> : <ContextPicker value={ctx} onChange={setContextId} contexts={contexts.data?.data ?? []} error={contexts.error} />}
      </Card>
      {ctx ? (
        <Card title="Controls of this context">
          {/* Only once this context's controls are read: until then, or when they could not be, no other context's values stand to be saved to it. */}
          {current.data?.context_id === Number(ctx) ? (
            <ControlsForm key={ctx} ctx={ctx} controls={current.data} admin={isAdmin(session.role)} onSaved={current.reload} />
          ) : (
            <Loading show={current.loading} />
          )}
          <Problem error={current.error} />
        </Card>
      ) : null}
    </>
  );
}
