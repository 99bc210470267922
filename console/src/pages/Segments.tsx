import { useState } from 'react';
import { api, listPage, type Segment } from '../api.ts';
import { DataTable, Form, RowButton } from '../table.tsx';
import { Card, Field, PageHeader, Problem, thenReload, useAction, usePages, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

export function Segments({ session }: PageProps) {
  const segments = usePages((after) => listPage<Segment>('/api/segments', after), []);
  const [name, setName] = useState('');
  const [eventType, setEventType] = useState('purchase');
  const [minCount, setMinCount] = useState('1');
  const [days, setDays] = useState('30');
  const a = useAction();
  const create = () =>
    a.run(async () => {
      await api('POST', '/api/segments', { name, description: '', definition: { event_type: eventType, min_count: Number(minCount), within_days: Number(days) } });
      setName('');
      segments.reload();
    });
  // A segment a rule or experiment names is not deleted (409): the message says which.
  const remove = (s: Segment) =>
    a.run(async () => {
      if (!window.confirm(`Delete segment ${s.name} (#${s.id})? It cannot be restored.`)) return;
      await thenReload(api('DELETE', `/api/segments/${s.id}`), segments.reload);
    });
  const admin = isAdmin(session.role);
  return (
    <>
      <PageHeader title="Segments" />
      <Card title="Segments">
        <DataTable
          label="Segments"
          error={segments.error}
          rows={segments.rows}
          loading={segments.loading}
          more={segments.more}
          rowKey={(s) => s.id}
          empty="No segments yet."
          columns={[
            { header: 'ID', cell: (s) => s.id },
            { header: 'Name', cell: (s) => s.name },
            { header: 'Definition', cell: (s) => <code>{JSON.stringify(s.definition)}</code> },
            { header: 'Size (estimate)', cell: (s) => s.size_estimate ?? '–' },
            { header: 'Created', cell: (s) => when(s.created) },
            {
              header: 'Actions',
              // A viewer reads the audit trail too: its History link (until 2026-12-06 admins' alone).
              cell: (s) => (
                <>
                  {admin ? (
                    <>
                      <RowButton text="Delete" name={s.name} onClick={() => remove(s)} danger />{' '}
                    </>
                  ) : null}
                  <a href={`#/audit?resource=segments/${s.id}`}>History</a>
                </>
              ),
            },
          ]}
        />
      </Card>
      {admin ? (
        <Card title="New segment">
          <Form label="New segment" onSubmit={create} submit="Create segment" busy={a.busy}>
            <Field label="Segment name" value={name} onChange={setName} required placeholder="buyers" />
            <Field label="Event type" value={eventType} onChange={setEventType} required />
            <Field label="At least (events)" type="number" min={1} max={500} value={minCount} onChange={setMinCount} />
            <Field label="Within (days)" type="number" min={1} max={365} value={days} onChange={setDays} />
          </Form>
        </Card>
      ) : null}
      <Problem error={a.error} />
    </>
  );
}
