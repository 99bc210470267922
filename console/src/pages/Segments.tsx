import { useState, type FormEvent } from 'react';
import { api, type Page, type Segment } from '../api.ts';
import { Card, Empty, Field, PageHeader, Problem, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

export function Segments({ session }: PageProps) {
  const segments = useLoad(() => api<Page<Segment>>('GET', '/api/segments?limit=100'), []);
  const [name, setName] = useState('');
  const [eventType, setEventType] = useState('purchase');
  const [minCount, setMinCount] = useState('1');
  const [days, setDays] = useState('30');
  const a = useAction();
  const create = (e: FormEvent) => {
    e.preventDefault();
    void a.run(async () => {
      await api('POST', '/api/segments', { name, description: '', definition: { event_type: eventType, min_count: Number(minCount), within_days: Number(days) } });
      setName('');
      segments.reload();
    });
  };
  return (
    <>
      <PageHeader title="Segments" />
      <Card title="Segments">
        <Problem error={segments.error} />
        {segments.data?.data.length ? (
          <table aria-label="Segments">
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">Name</th>
                <th scope="col">Definition</th>
                <th scope="col">Size (estimate)</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {segments.data.data.map((s) => (
                <tr key={s.id}>
                  <td>{s.id}</td>
                  <td>{s.name}</td>
                  <td>
                    <code>{JSON.stringify(s.definition)}</code>
                  </td>
                  <td>{s.size_estimate ?? '–'}</td>
                  <td>{when(s.created)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>No segments yet.</Empty>
        )}
      </Card>
      {isAdmin(session.role) ? (
        <Card title="New segment">
          <form className="inline" onSubmit={create} aria-label="New segment">
            <Field label="Segment name" value={name} onChange={setName} required placeholder="buyers" />
            <Field label="Event type" value={eventType} onChange={setEventType} required />
            <Field label="At least (events)" type="number" min={1} max={500} value={minCount} onChange={setMinCount} />
            <Field label="Within (days)" type="number" min={1} max={365} value={days} onChange={setDays} />
            <button type="submit" className="primary" disabled={a.busy}>
              Create segment
            </button>
          </form>
          <Problem error={a.error} />
        </Card>
      ) : null}
    </>
  );
}
