import { useState } from 'react';
import { api, listPage, type Rule } from '../api.ts';
import { DataTable, Form, RowButton } from '../table.tsx';
import { Card, Field, PageHeader, Problem, Select, thenReload, useAction, usePages, when } from '../ui.tsx';
import { ContextPicker, audience, useChosenContext, NewContext, isAdmin, parseValue, useContexts, useSegments } from './common.tsx';
import type { PageProps } from './index.tsx';

const OPS = ['eq', 'neq', 'in', 'gte', 'lte', 'exists'];

/** When a rule applies: always, or its window (starts_at, ends_at), said as over or not begun yet. */
function schedule(r: Rule): string {
  const now = Date.now() / 1000;
  if (r.ends_at !== null && r.ends_at !== undefined && r.ends_at <= now) return `ended ${when(r.ends_at)}`;
  const from = r.starts_at !== null && r.starts_at !== undefined ? `${r.starts_at > now ? 'from' : 'since'} ${when(r.starts_at)}` : '';
  const until = r.ends_at !== null && r.ends_at !== undefined ? `until ${when(r.ends_at)}` : '';
  return [from, until].filter(Boolean).join(' ') || 'always';
}

export function Rules({ session }: PageProps) {
  const contexts = useContexts();
  const segments = useSegments();
  const [contextId, setContextId] = useChosenContext();
  const ctx = contextId || String(contexts.data?.data[0]?.id ?? '');
  const rules = usePages((after) => (ctx ? listPage<Rule>('/api/rules', after, { contextId: ctx }) : Promise.resolve(undefined)), [ctx]);
  const [name, setName] = useState('');
  const [field, setField] = useState('metadata.brand');
  const [op, setOp] = useState('eq');
  const [value, setValue] = useState('');
  // A rule as made promotes what it matches until its boost is chosen (it started at 0, which takes those items out of every answer).
  const [boost, setBoost] = useState('2');
  const a = useAction();
  const admin = isAdmin(session.role);

  const create = () =>
    a.run(async () => {
      await api('POST', '/api/rules', { name, context_id: Number(ctx), conditions: [{ field, op, value: parseValue(op, value) }], boost: Number(boost) });
      setName('');
      setValue('');
      rules.reload();
    });
  const toggle = (r: Rule) =>
    a.run(async () => {
      await thenReload(api('PATCH', `/api/rules/${r.id}`, { enabled: !r.enabled }), rules.reload);
    });
  const remove = (r: Rule) =>
    a.run(async () => {
      if (!window.confirm(`Delete rule ${r.name} (#${r.id})? It stops applying at once and cannot be restored.`)) return;
      await thenReload(api('DELETE', `/api/rules/${r.id}`), rules.reload);
    });

  return (
    <>
      <PageHeader title="Rules" />
      <Card>
        <div className="inline">
          <ContextPicker value={ctx} onChange={setContextId} contexts={contexts.data?.data ?? []} error={contexts.error} />
          {admin ? (
            <NewContext
              disabled={false}
              onCreated={(c) => {
                contexts.created(c);
                setContextId(String(c.id));
              }}
            />
          ) : null}
        </div>
        <p className="muted">Rules apply to recommendations and searches that name the context. Boost above 1 promotes, below 1 demotes, 0 excludes.</p>
      </Card>
      <Card title="Rules of this context">
        <DataTable
          label="Rules"
          error={rules.error}
          rows={rules.rows}
          loading={rules.loading}
          more={rules.more}
          rowKey={(r) => r.id}
          // Not while the contexts are read, or could not be (the picker says so).
          empty={ctx ? 'No rules in this context.' : contexts.data ? (admin ? 'Create a context first.' : 'No contexts yet: an admin creates them.') : null}
          columns={[
            { header: 'ID', cell: (r) => r.id },
            { header: 'Name', cell: (r) => r.name },
            { header: 'Conditions', cell: (r) => r.conditions.map((c) => `${c.field} ${c.op} ${JSON.stringify(c.value)}`).join(' and ') || 'every item' },
            { header: 'Boost', cell: (r) => r.boost },
            // A rule for a segment's users, or within a time window, said so: it looked like one for everyone, always
            // (until 2026-12-06), though a segment's deletion is refused naming it.
            { header: 'For', cell: (r) => audience(r.segment_id, segments.data?.data) },
            { header: 'When', cell: schedule },
            { header: 'Enabled', cell: (r) => (r.enabled ? 'yes' : 'no') },
            { header: 'Created', cell: (r) => when(r.created) },
            {
              header: 'Actions',
              // A viewer reads the audit trail too: its History link (until 2026-12-06 admins' alone).
              cell: (r) => (
                <>
                  {admin ? (
                    <>
                      <RowButton text={r.enabled ? 'Disable' : 'Enable'} name={r.name} onClick={() => toggle(r)} /> <RowButton text="Delete" name={r.name} onClick={() => remove(r)} danger />{' '}
                    </>
                  ) : null}
                  <a href={`#/audit?resource=rules/${r.id}`}>History</a>
                </>
              ),
            },
          ]}
        />
      </Card>
      {admin && ctx ? (
        <Card title="New rule">
          <Form label="New rule" onSubmit={create} submit="Create rule" busy={a.busy}>
            <Field label="Rule name" value={name} onChange={setName} required placeholder="no Bolt" />
            <Field label="Condition field" value={field} onChange={setField} required hint="category, name, created or metadata.<key>" />
            <Select label="Condition operator" value={op} onChange={setOp} options={OPS.map((o) => ({ value: o, label: o }))} />
            <Field
              label="Condition value"
              value={value}
              onChange={setValue}
              // Every operator but exists compares with a value: an empty one would make a rule that matches nothing.
              required={op !== 'exists'}
              hint={op === 'exists' ? 'true, or false for "absent"' : 'a list for in: a, b, c; "42" in quotes is text'}
            />
            <Field label="Boost" type="number" step="any" min={0} value={boost} onChange={setBoost} required />
          </Form>
        </Card>
      ) : null}
      <Problem error={a.error} />
    </>
  );
}
