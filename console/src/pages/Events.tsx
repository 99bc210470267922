import { useEffect, useState, type FormEvent } from 'react';
import { api, qs, type EventRow, type EventType, type Page } from '../api.ts';
import { Card, Empty, Field, Loading, PageHeader, Problem, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

interface EventList {
  data: EventRow[];
  has_more: boolean;
  next_cursor: string | null;
}

export function Events({ session }: PageProps) {
  const types = useLoad(() => api<Page<EventType>>('GET', '/api/event-types'), []);
  const [name, setName] = useState('');
  const [weight, setWeight] = useState('10');
  const add = useAction();
  const [userId, setUserId] = useState('');
  const [type, setType] = useState('');
  const [rows, setRows] = useState<EventRow[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const list = useAction();
  const [loaded, setLoaded] = useState(false);

  const load = (after?: string) =>
    list.run(async () => {
      const r = await api<EventList>('GET', `/console/api/events${qs({ limit: 50, user_id: userId, type, starting_after: after })}`);
      setRows((x) => (after ? [...x, ...r.data] : r.data));
      setCursor(r.has_more ? r.next_cursor : null);
      setLoaded(true);
    });
  // biome-ignore lint/correctness/useExhaustiveDependencies: the first visit loads once; later loads are the user's (more, filters).
  useEffect(() => void load(), []);

  const addType = (e: FormEvent) => {
    e.preventDefault();
    void add.run(async () => {
      await api('POST', '/api/event-types', { name, weight: Number(weight) });
      setName('');
      types.reload();
    });
  };
  const setTypeWeight = (t: EventType, w: number) =>
    add.run(async () => {
      await api('PATCH', `/api/event-types/${t.id}`, { weight: w });
      types.reload();
    });

  return (
    <>
      <PageHeader title="Events" />
      <Card title="Event types">
        <Problem error={types.error} />
        {types.data?.data.length ? (
          <table aria-label="Event types">
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">Name</th>
                <th scope="col">Weight (1–100)</th>
              </tr>
            </thead>
            <tbody>
              {types.data.data.map((t) => (
                <tr key={t.id}>
                  <td>{t.id}</td>
                  <td>{t.name}</td>
                  <td>
                    <label className="sr-only" htmlFor={`w-${t.id}`}>
                      Weight of {t.name}
                    </label>
                    <input
                      id={`w-${t.id}`}
                      type="number"
                      min={1}
                      max={100}
                      defaultValue={t.weight}
                      disabled={!isAdmin(session.role)}
                      onBlur={(e) => {
                        const w = Number(e.target.value);
                        if (w !== t.weight && w >= 1 && w <= 100) void setTypeWeight(t, w);
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>No event types yet: add the types your application sends (click, purchase…).</Empty>
        )}
        {isAdmin(session.role) ? (
          <form className="inline" onSubmit={addType} aria-label="New event type">
            <Field label="Type name" value={name} onChange={setName} required placeholder="purchase" />
            <Field label="Weight" type="number" min={1} max={100} value={weight} onChange={setWeight} required />
            <button type="submit" disabled={add.busy}>
              Add event type
            </button>
          </form>
        ) : null}
        <Problem error={add.error} />
      </Card>
      <Card title="Recent events">
        <form
          className="inline"
          aria-label="Filter events"
          onSubmit={(e) => {
            e.preventDefault();
            void load();
          }}
        >
          <Field label="User ID" value={userId} onChange={setUserId} />
          <Field label="Type" value={type} onChange={setType} />
          <button type="submit">Filter</button>
        </form>
        <Problem error={list.error} />
        <Loading show={list.busy && rows.length === 0} />
        {loaded && rows.length === 0 ? <Empty>No events.</Empty> : null}
        {rows.length ? (
          <div className="table-wrap">
            <table aria-label="Events">
              <thead>
                <tr>
                  <th scope="col">ID</th>
                  <th scope="col">Type</th>
                  <th scope="col">User</th>
                  <th scope="col">Item</th>
                  <th scope="col">Occurred</th>
                  <th scope="col">Context</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.id}>
                    <td>{r.id}</td>
                    <td>{r.type}</td>
                    <td>{r.user_id}</td>
                    <td>{r.item_id}</td>
                    <td>{when(r.occurred_at)}</td>
                    <td>{r.context_id ?? '–'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {cursor ? (
          <button type="button" disabled={list.busy} onClick={() => void load(cursor)}>
            Load more
          </button>
        ) : null}
      </Card>
    </>
  );
}
