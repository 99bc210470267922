import { useState, type FormEvent } from 'react';
import { api, qs, type Page, type Rule } from '../api.ts';
import { Card, Empty, Field, PageHeader, Problem, Select, useAction, useLoad, when } from '../ui.tsx';
import { ContextPicker, NewContext, isAdmin, useContexts } from './common.tsx';
import type { PageProps } from './index.tsx';

const OPS = ['eq', 'neq', 'in', 'gte', 'lte', 'exists'];

function parseValue(op: string, raw: string): unknown {
  const one = (s: string): unknown => (s !== '' && !Number.isNaN(Number(s)) ? Number(s) : s);
  if (op === 'in') return raw.split(',').map((s) => one(s.trim()));
  if (op === 'exists') return raw.trim() !== 'false';
  return one(raw.trim());
}

export function Rules({ session }: PageProps) {
  const contexts = useContexts();
  const [contextId, setContextId] = useState('');
  const ctx = contextId || String(contexts.data?.data[0]?.id ?? '');
  const rules = useLoad(() => (ctx ? api<Page<Rule>>('GET', `/api/rules${qs({ contextId: ctx, limit: 100 })}`) : Promise.resolve(undefined)), [ctx]);
  const [name, setName] = useState('');
  const [field, setField] = useState('metadata.brand');
  const [op, setOp] = useState('eq');
  const [value, setValue] = useState('');
  const [boost, setBoost] = useState('0');
  const a = useAction();
  const admin = isAdmin(session.role);

  const create = (e: FormEvent) => {
    e.preventDefault();
    void a.run(async () => {
      await api('POST', '/api/rules', { name, context_id: Number(ctx), conditions: [{ field, op, value: parseValue(op, value) }], boost: Number(boost) });
      setName('');
      setValue('');
      rules.reload();
    });
  };
  const toggle = (r: Rule) =>
    a.run(async () => {
      await api('PATCH', `/api/rules/${r.id}`, { enabled: !r.enabled });
      rules.reload();
    });
  const remove = (r: Rule) =>
    a.run(async () => {
      await api('DELETE', `/api/rules/${r.id}`);
      rules.reload();
    });

  return (
    <>
      <PageHeader title="Rules" />
      <Card>
        <div className="inline">
          <ContextPicker value={ctx} onChange={setContextId} contexts={contexts.data?.data ?? []} />
          {admin ? (
            <NewContext
              disabled={false}
              onCreated={(c) => {
                contexts.reload();
                setContextId(String(c.id));
              }}
            />
          ) : null}
        </div>
        <p className="muted">Rules apply to recommendations and searches that name the context. Boost above 1 promotes, below 1 demotes, 0 excludes.</p>
      </Card>
      <Card title="Rules of this context">
        <Problem error={rules.error} />
        {rules.data?.data.length ? (
          <table aria-label="Rules">
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">Name</th>
                <th scope="col">Conditions</th>
                <th scope="col">Boost</th>
                <th scope="col">Enabled</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rules.data.data.map((r) => (
                <tr key={r.id}>
                  <td>{r.id}</td>
                  <td>{r.name}</td>
                  <td>{r.conditions.map((c) => `${c.field} ${c.op} ${JSON.stringify(c.value)}`).join(' and ') || 'every item'}</td>
                  <td>{r.boost}</td>
                  <td>{r.enabled ? 'yes' : 'no'}</td>
                  <td>{when(r.created)}</td>
                  <td>
                    {admin ? (
                      <>
                        <button type="button" onClick={() => void toggle(r)}>
                          {r.enabled ? 'Disable' : 'Enable'} <span className="sr-only">{r.name}</span>
                        </button>{' '}
                        <button type="button" className="danger" onClick={() => void remove(r)}>
                          Delete <span className="sr-only">{r.name}</span>
                        </button>{' '}
                        <a href={`#/audit?resource=rules/${r.id}`}>History</a>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>{ctx ? 'No rules in this context.' : 'Create a context first.'}</Empty>
        )}
      </Card>
      {admin && ctx ? (
        <Card title="New rule">
          <form className="inline" onSubmit={create} aria-label="New rule">
            <Field label="Rule name" value={name} onChange={setName} required placeholder="no Bolt" />
            <Field label="Condition field" value={field} onChange={setField} required hint="category, name, created or metadata.<key>" />
            <Select label="Condition operator" value={op} onChange={setOp} options={OPS.map((o) => ({ value: o, label: o }))} />
            <Field label="Condition value" value={value} onChange={setValue} hint="a list for in: a, b, c" />
            <Field label="Boost" type="number" step="any" min={0} value={boost} onChange={setBoost} required />
            <button type="submit" className="primary" disabled={a.busy}>
              Create rule
            </button>
          </form>
        </Card>
      ) : null}
      <Problem error={a.error} />
    </>
  );
}
