import { useState, type FormEvent } from 'react';
import { api, type EventType, type Page, type Template } from '../api.ts';
import { Card, Check, Empty, Field, PageHeader, Problem, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

export function Templates({ session }: PageProps) {
  const templates = useLoad(() => api<Page<Template>>('GET', '/api/events/templates'), []);
  const types = useLoad(() => api<Page<EventType>>('GET', '/api/event-types'), []);
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Record<number, boolean>>({});
  const [perSignal, setPerSignal] = useState('1');
  const [total, setTotal] = useState('10');
  const a = useAction();
  const typeName = (id: number) => types.data?.data.find((t) => t.id === id)?.name ?? `#${id}`;

  const create = (e: FormEvent) => {
    e.preventDefault();
    void a.run(async () => {
      const event_types = Object.entries(chosen)
        .filter(([, v]) => v)
        .map(([id]) => ({ id: Number(id), weight: 1 }));
      await api('POST', '/api/events/templates', { name, event_types, thresholds: { per_signal_min: Number(perSignal), total_min: Number(total) } });
      setName('');
      setChosen({});
      templates.reload();
    });
  };
  const publish = (t: Template) =>
    a.run(async () => {
      await api('PATCH', `/api/events/templates/${t.id}`, { status: 'Published' });
      templates.reload();
    });

  return (
    <>
      <PageHeader title="Templates" />
      <Card title="Training templates">
        <Problem error={templates.error} />
        {templates.data?.data.length ? (
          <table aria-label="Templates">
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">Name</th>
                <th scope="col">Event types</th>
                <th scope="col">Thresholds</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {templates.data.data.map((t) => (
                <tr key={t.id}>
                  <td>{t.id}</td>
                  <td>{t.name}</td>
                  <td>{t.event_types.map((e) => `${typeName(e.id)}${e.weight !== 1 ? ` ×${e.weight}` : ''}`).join(', ')}</td>
                  <td>
                    ≥{t.thresholds.per_signal_min} per signal, ≥{t.thresholds.total_min} total
                  </td>
                  <td>
                    <span className={`badge ${t.status}`}>{t.status}</span>
                  </td>
                  <td>{when(t.created)}</td>
                  <td>
                    {t.status === 'Draft' && isAdmin(session.role) ? (
                      <button type="button" onClick={() => void publish(t)} aria-label={`Publish ${t.name}`}>
                        Publish
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>No templates yet.</Empty>
        )}
      </Card>
      {isAdmin(session.role) ? (
        <Card title="New template">
          <form onSubmit={create} aria-label="New template">
            <Field label="Template name" value={name} onChange={setName} required />
            <fieldset>
              <legend>Event types</legend>
              {types.data?.data.length ? (
                types.data.data.map((t) => <Check key={t.id} label={`${t.name} (weight ${t.weight})`} checked={chosen[t.id] ?? false} onChange={(v) => setChosen((c) => ({ ...c, [t.id]: v }))} />)
              ) : (
                <Empty>Add event types on the Events page first.</Empty>
              )}
            </fieldset>
            <div className="inline">
              <Field label="Minimum events per signal" type="number" min={0} value={perSignal} onChange={setPerSignal} />
              <Field label="Minimum events in total" type="number" min={0} value={total} onChange={setTotal} />
            </div>
            <button type="submit" className="primary" disabled={a.busy}>
              Create template
            </button>
          </form>
        </Card>
      ) : null}
      <Problem error={a.error} />
    </>
  );
}
