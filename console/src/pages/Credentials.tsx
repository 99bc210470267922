import { useState } from 'react';
import { api, listPage, type ApiKey, type ApiKeyCreated, type Client, type ClientCreated } from '../api.ts';
import { Checks, DataTable, Form, RowButton } from '../table.tsx';
import { Card, Empty, Field, PageHeader, Problem, ShownOnce, thenReload, useAction, usePages, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

const KEY_SCOPES = ['admin', 'events', 'items', 'recommendations'].map((s) => ({ value: s, label: s }));
const CLIENT_SCOPES = ['service-api/read', 'service-api/write'].map((s) => ({ value: s, label: s }));
const picked = (all: { value: string }[], chosen: Record<string, boolean>): string[] => all.filter((s) => chosen[s.value]).map((s) => s.value);

export function Credentials({ session }: PageProps) {
  const admin = isAdmin(session.role);
  const keys = usePages((after) => (admin ? listPage<ApiKey>('/api/api-keys', after) : Promise.resolve(undefined)), [admin]);
  const clients = usePages((after) => (admin ? listPage<Client>('/api/clients', after) : Promise.resolve(undefined)), [admin]);
  const [keyName, setKeyName] = useState('');
  const [env, setEnv] = useState('production');
  const [scopes, setScopes] = useState<Record<string, boolean>>({ items: true });
  const [clientName, setClientName] = useState('');
  const [clientScopes, setClientScopes] = useState<Record<string, boolean>>({ 'service-api/read': true });
  // Every secret created on this visit until its panel is dismissed: a second key does not hide the first's.
  const [secrets, setSecrets] = useState<{ label: string; value: string }[]>([]);
  const show = (label: string, value: string) => setSecrets((xs) => [{ label, value }, ...xs]);
  const a = useAction();

  if (!admin) {
    return (
      <>
        <PageHeader title="API keys & clients" />
        <Card>
          <Empty>Only admins manage credentials.</Empty>
        </Card>
      </>
    );
  }

  const createKey = () =>
    a.run(async () => {
      const k = await api<ApiKeyCreated>('POST', '/api/api-keys', { name: keyName, environment: env, scopes: picked(KEY_SCOPES, scopes) });
      show(`API key ${k.prefix}`, k.key);
      setKeyName('');
      keys.reload();
    });
  const createClient = () =>
    a.run(async () => {
      const c = await api<ClientCreated>('POST', '/api/clients', { name: clientName, scopes: picked(CLIENT_SCOPES, clientScopes) });
      show(`Client secret of ${c.client_id}`, c.client_secret);
      setClientName('');
      clients.reload();
    });
  const revokeKey = (k: ApiKey) =>
    a.run(async () => {
      if (!window.confirm(`Revoke API key ${k.prefix} (${k.name})? Requests using it fail at once.`)) return;
      await thenReload(api('DELETE', `/api/api-keys/${k.id}`), keys.reload);
    });
  const deleteClient = (c: Client) =>
    a.run(async () => {
      if (!window.confirm(`Delete client ${c.client_id} (${c.name})? Its tokens stop working at once.`)) return;
      await thenReload(api('DELETE', `/api/clients/${c.client_id}`), clients.reload);
    });

  return (
    <>
      <PageHeader title="API keys & clients" />
      <p className="muted">Keys and client secrets are for servers only. They are shown once, here, at creation; the service keeps only their hashes.</p>
      {secrets.map((x) => (
        <ShownOnce key={x.value} label={x.label} value={x.value} onDone={() => setSecrets((xs) => xs.filter((y) => y.value !== x.value))} />
      ))}
      <Problem error={a.error} />
      <Card title="Platform API keys">
        <DataTable
          label="API keys"
          error={keys.error}
          rows={keys.rows}
          loading={keys.loading}
          more={keys.more}
          rowKey={(k) => k.id}
          empty="No keys."
          columns={[
            { header: 'Prefix', cell: (k) => <code>svc_{k.prefix}_…</code> },
            { header: 'Name', cell: (k) => k.name },
            { header: 'Environment', cell: (k) => k.environment },
            { header: 'Scopes', cell: (k) => k.scopes.join(', ') },
            { header: 'Created', cell: (k) => when(k.created) },
            {
              header: 'Actions',
              // Its create (and, once revoked, its delete) are in the audit trail, by its prefix.
              cell: (k) => (
                <>
                  <RowButton text="Revoke" name={k.name} onClick={() => revokeKey(k)} danger /> <a href={`#/audit?resource=api-keys/${k.prefix}`}>History</a>
                </>
              ),
            },
          ]}
        />
        <Form label="New API key" onSubmit={createKey} submit="Create API key" busy={a.busy}>
          <Field label="Key name" value={keyName} onChange={setKeyName} required placeholder="catalog sync" />
          <Field label="Environment" value={env} onChange={setEnv} required />
          <Checks legend="Scopes" className="inline" options={KEY_SCOPES} chosen={scopes} onChange={setScopes} />
        </Form>
      </Card>
      <Card title="OAuth clients (Core API)">
        <DataTable
          label="OAuth clients"
          error={clients.error}
          rows={clients.rows}
          loading={clients.loading}
          more={clients.more}
          rowKey={(c) => c.client_id}
          empty="No clients."
          columns={[
            { header: 'Client ID', cell: (c) => <code>{c.client_id}</code> },
            { header: 'Name', cell: (c) => c.name },
            { header: 'Scopes', cell: (c) => c.scopes.join(', ') },
            { header: 'Created', cell: (c) => when(c.created) },
            {
              header: 'Actions',
              cell: (c) => (
                <>
                  <RowButton text="Delete" name={c.name} onClick={() => deleteClient(c)} danger /> <a href={`#/audit?resource=clients/${encodeURIComponent(c.client_id)}`}>History</a>
                </>
              ),
            },
          ]}
        />
        <Form label="New OAuth client" onSubmit={createClient} submit="Create client" busy={a.busy}>
          <Field label="Client name" value={clientName} onChange={setClientName} required placeholder="storefront backend" />
          <Checks legend="Client scopes" className="inline" options={CLIENT_SCOPES} chosen={clientScopes} onChange={setClientScopes} />
        </Form>
      </Card>
    </>
  );
}
