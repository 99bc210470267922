import { useState } from 'react';
import { api, listAll, type EventType, type Template } from '../api.ts';
import { ActionButton, Checks, DataTable, Form } from '../table.tsx';
import { Card, Field, PageHeader, Problem, thenReload, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

export function Templates({ session }: PageProps) {
  const templates = useLoad(() => listAll<Template>('/api/events/templates'), []);
  const types = useLoad(() => listAll<EventType>('/api/event-types'), []);
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Record<string, boolean>>({});
  const [perSignal, setPerSignal] = useState('1');
  const [total, setTotal] = useState('10');
  const a = useAction();
  const typeName = (id: number) => types.data?.data.find((t) => t.id === id)?.name ?? `#${id}`;

  const create = () =>
    a.run(async () => {
      const event_types = Object.entries(chosen)
        .filter(([, v]) => v)
        .map(([id]) => ({ id: Number(id), weight: 1 }));
      await api('POST', '/api/events/templates', { name, event_types, thresholds: { per_signal_min: Number(perSignal), total_min: Number(total) } });
      setName('');
      setChosen({});
      templates.reload();
    });
  const publish = (t: Template) =>
    a.run(async () => {
      await thenReload(api('PATCH', `/api/events/templates/${t.id}`, { status: 'Published' }), templates.reload);
    });

  return (
    <>
      <PageHeader title="Templates" />
      <Card title="Training templates">
        <DataTable
          label="Templates"
          error={templates.error}
          rows={templates.data?.data}
          loading={templates.loading}
          rowKey={(t) => t.id}
          empty="No templates yet."
          columns={[
            { header: 'ID', cell: (t) => t.id },
            { header: 'Name', cell: (t) => t.name },
            { header: 'Event types', cell: (t) => t.event_types.map((e) => `${typeName(e.id)}${e.weight !== 1 ? ` ×${e.weight}` : ''}`).join(', ') },
            { header: 'Thresholds', cell: (t) => `≥${t.thresholds.per_signal_min} per signal, ≥${t.thresholds.total_min} total` },
            { header: 'Status', cell: (t) => <span className={`badge ${t.status}`}>{t.status}</span> },
            { header: 'Created', cell: (t) => when(t.created) },
            {
              header: 'Actions',
              srOnly: true,
              cell: (t) =>
                t.status === 'Draft' && isAdmin(session.role) ? (
                  <ActionButton onClick={() => publish(t)} label={`Publish ${t.name}`}>
                    Publish
                  </ActionButton>
                ) : null,
            },
          ]}
        />
      </Card>
      {isAdmin(session.role) ? (
        <Card title="New template">
          <Form label="New template" onSubmit={create} submit="Create template" busy={a.busy} className="">
            <Field label="Template name" value={name} onChange={setName} required />
            <Checks
              legend="Event types"
              options={(types.data?.data ?? []).map((t) => ({ value: String(t.id), label: `${t.name} (weight ${t.weight})` }))}
              chosen={chosen}
              onChange={setChosen}
              // Unread, the event types are not said to be none.
              empty={types.data ? 'Add event types on the Events page first.' : undefined}
            />
            <Problem error={types.error && `The event types could not be read: ${types.error}`} />
            <div className="inline">
              <Field label="Minimum events per signal" type="number" min={0} value={perSignal} onChange={setPerSignal} required />
              <Field label="Minimum events in total" type="number" min={0} value={total} onChange={setTotal} required />
            </div>
          </Form>
        </Card>
      ) : null}
      <Problem error={a.error} />
    </>
  );
}
