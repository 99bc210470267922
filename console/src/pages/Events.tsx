import { useEffect, useRef, useState } from 'react';
import { api, listAll, qs, type EventList, type EventRow, type EventType } from '../api.ts';
import { DataTable, Form } from '../table.tsx';
import { Card, Field, Loading, PageHeader, Problem, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

export function Events({ session }: PageProps) {
  const types = useLoad(() => listAll<EventType>('/api/event-types'), []);
  const [name, setName] = useState('');
  const [weight, setWeight] = useState('10');
  const add = useAction();
  const [userId, setUserId] = useState('');
  const [type, setType] = useState('');
  const [rows, setRows] = useState<EventRow[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const list = useAction();
  const [loaded, setLoaded] = useState(false);

  // The filter on screen: "Load more" goes on with it, not with what the form holds since.
  const [applied, setApplied] = useState({ user_id: '', type: '' });
  // The latest load: an earlier one answering after it (a "Load more" of the list before a filter sent meanwhile) is not shown.
  const latest = useRef(0);
  const load = (filter: { user_id: string; type: string }, after?: string) =>
    list.run(async () => {
      const mine = ++latest.current;
      // A new filter replaces the list: no "Load more" of the one it replaces meanwhile.
      if (!after) setCursor(null);
      try {
        const r = await api<EventList>('GET', `/console/api/events${qs({ limit: 50, order: 'desc', ...filter, starting_after: after })}`);
        if (mine !== latest.current) return;
        setApplied(filter);
        setRows((x) => (after ? [...x, ...r.data] : r.data));
        setCursor(r.has_more ? r.next_cursor : null);
        setLoaded(true);
      } catch (e) {
        if (mine !== latest.current) return;
        // A filter that failed shows its error alone, as the Catalog's search does ("Load more" keeps the rows on screen).
        if (!after) {
          setRows([]);
          setCursor(null);
          setLoaded(false);
        }
        throw e;
      }
    });
  // A filter's load, the first visit's included: its form is busy while it runs (not while "Load more" does: a filter sent then goes).
  const filtering = useAction();
  const filter = (f: { user_id: string; type: string }) => filtering.run(() => load(f));
  // biome-ignore lint/correctness/useExhaustiveDependencies: the first visit loads once; later loads are the user's (more, filters).
  useEffect(() => void filter({ user_id: '', type: '' }), []);

  const addType = () =>
    add.run(async () => {
      await api('POST', '/api/event-types', { name, weight: Number(weight) });
      setName('');
      types.reload();
    });
  const setTypeWeight = (t: EventType, w: number) =>
    add.run(async () => {
      await api('PATCH', `/api/event-types/${t.id}`, { weight: w });
      types.reload();
    });

  return (
    <>
      <PageHeader title="Events" />
      <Card title="Event types">
        <DataTable
          label="Event types"
          error={types.error}
          rows={types.data?.data}
          loading={types.loading}
          rowKey={(t) => t.id}
          // A viewer, who cannot add one, is told who does (until 2026-12-08 it was told to add them).
          empty={isAdmin(session.role) ? 'No event types yet: add the types your application sends (click, purchase…).' : 'No event types yet: an admin adds the types your application sends.'}
          columns={[
            { header: 'ID', cell: (t) => t.id },
            { header: 'Name', cell: (t) => t.name },
            {
              header: 'Weight (1–100)',
              cell: (t) => (
                <>
                  <label className="sr-only" htmlFor={`w-${t.id}`}>
                    Weight of {t.name}
                  </label>
                  <input
                    // Made anew when the weight read changes (a reload after another change), so it shows what stands, and a blur without an edit sends nothing.
                    key={`${t.id}:${t.weight}`}
                    id={`w-${t.id}`}
                    type="number"
                    min={1}
                    max={100}
                    defaultValue={t.weight}
                    disabled={!isAdmin(session.role)}
                    onBlur={(e) => {
                      const input = e.target;
                      const w = Number(input.value);
                      if (input.value.trim() !== '' && w === t.weight) return;
                      if (input.value.trim() === '' || !Number.isInteger(w) || w < 1 || w > 100) {
                        // Not saved: say so, and show the weight that stands.
                        add.fail(`The weight of ${t.name} must be a whole number from 1 to 100; it stays ${t.weight}.`);
                        input.value = String(t.weight);
                        return;
                      }
                      void setTypeWeight(t, w);
                    }}
                  />
                </>
              ),
            },
          ]}
        />
        {isAdmin(session.role) ? (
          <Form label="New event type" onSubmit={addType} submit="Add event type" busy={add.busy} plain>
            <Field label="Type name" value={name} onChange={setName} required placeholder="purchase" />
            <Field label="Weight" type="number" min={1} max={100} value={weight} onChange={setWeight} required />
          </Form>
        ) : null}
        <Problem error={add.error} />
      </Card>
      <Card title="Recent events">
        <Form label="Filter events" onSubmit={() => filter({ user_id: userId, type })} submit="Filter" busy={filtering.busy} plain>
          <Field label="User ID" value={userId} onChange={setUserId} />
          <Field label="Type" value={type} onChange={setType} />
        </Form>
        <Problem error={list.error} />
        <Loading show={list.busy && rows.length === 0} />
        <DataTable
          label="Events"
          rows={rows}
          rowKey={(r) => r.id}
          empty={loaded ? 'No events.' : null}
          more={cursor ? { busy: list.busy, load: () => void load(applied, cursor) } : null}
          columns={[
            { header: 'ID', cell: (r) => r.id },
            { header: 'Type', cell: (r) => r.type },
            { header: 'User', cell: (r) => r.user_id },
            { header: 'Item', cell: (r) => r.item_id },
            { header: 'Occurred', cell: (r) => when(r.occurred_at) },
            { header: 'Context', cell: (r) => r.context_id ?? '–' },
          ]}
        />
      </Card>
    </>
  );
}
