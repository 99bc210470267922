import { useState } from 'react';
import { api, listAll, type Endpoint } from '../api.ts';
import { DataTable, Form } from '../table.tsx';
import { BusyButton, Card, Check, Field, PageHeader, Problem, thenReload, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

export function Endpoints({ session }: PageProps) {
  const endpoints = useLoad(() => listAll<Endpoint>('/api/model-endpoints'), []);
  const [name, setName] = useState('');
  const [isDefault, setIsDefault] = useState(false);
  const a = useAction();
  const create = () =>
    a.run(async () => {
      await api('POST', '/api/model-endpoints', { endpoint_name: name, is_default: isDefault });
      setName('');
      endpoints.reload();
    });
  const makeDefault = (e: Endpoint) =>
    a.run(async () => {
      await thenReload(api('PATCH', `/api/model-endpoints/${e.id}`, { is_default: true }), endpoints.reload);
    });
  const admin = isAdmin(session.role);
  return (
    <>
      <PageHeader title="Serving endpoints" />
      <Card title="Endpoints">
        <DataTable
          label="Serving endpoints"
          error={endpoints.error}
          rows={endpoints.data?.data}
          loading={endpoints.loading}
          rowKey={(e) => e.id}
          empty="No endpoints yet."
          columns={[
            { header: 'Name', cell: (e) => e.endpoint_name },
            {
              header: 'Default',
              cell: (e) =>
                e.is_default ? (
                  'default'
                ) : admin ? (
                  <BusyButton busy={a.busy} onClick={() => makeDefault(e)}>
                    Make default
                  </BusyButton>
                ) : (
                  ''
                ),
            },
            { header: 'Serves', cell: (e) => (e.model_version ? <a href="#/models">v{e.model_version}</a> : 'popular items (no version promoted)') },
            { header: 'Created', cell: (e) => when(e.created) },
          ]}
        />
      </Card>
      {admin ? (
        <Card title="New endpoint">
          <Form label="New serving endpoint" onSubmit={create} submit="Create endpoint" busy={a.busy}>
            <Field label="Endpoint name" value={name} onChange={setName} required placeholder="main" />
            <Check label="Default endpoint" checked={isDefault} onChange={setIsDefault} />
          </Form>
          <Problem error={a.error} />
        </Card>
      ) : null}
    </>
  );
}
