import { useState, type FormEvent } from 'react';
import { api, type ApiKey, type Client, type Page } from '../api.ts';
import { Card, Check, Empty, Field, PageHeader, Problem, ShownOnce, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

const KEY_SCOPES = ['admin', 'events', 'items', 'recommendations'];
const CLIENT_SCOPES = ['service-api/read', 'service-api/write'];

export function Credentials({ session }: PageProps) {
  const admin = isAdmin(session.role);
  const keys = useLoad(() => (admin ? api<Page<ApiKey>>('GET', '/api/api-keys') : Promise.resolve(undefined)), [admin]);
  const clients = useLoad(() => (admin ? api<Page<Client>>('GET', '/api/clients') : Promise.resolve(undefined)), [admin]);
  const [keyName, setKeyName] = useState('');
  const [env, setEnv] = useState('production');
  const [scopes, setScopes] = useState<Record<string, boolean>>({ items: true });
  const [clientName, setClientName] = useState('');
  const [clientScopes, setClientScopes] = useState<Record<string, boolean>>({ 'service-api/read': true });
  const [secret, setSecret] = useState<{ label: string; value: string }>();
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

  const createKey = (e: FormEvent) => {
    e.preventDefault();
    void a.run(async () => {
      const k = await api<ApiKey>('POST', '/api/api-keys', { name: keyName, environment: env, scopes: KEY_SCOPES.filter((s) => scopes[s]) });
      setSecret({ label: `API key ${k.prefix}`, value: k.key ?? '' });
      setKeyName('');
      keys.reload();
    });
  };
  const createClient = (e: FormEvent) => {
    e.preventDefault();
    void a.run(async () => {
      const c = await api<Client>('POST', '/api/clients', { name: clientName, scopes: CLIENT_SCOPES.filter((s) => clientScopes[s]) });
      setSecret({ label: `Client secret of ${c.client_id}`, value: c.client_secret ?? '' });
      setClientName('');
      clients.reload();
    });
  };
  const revokeKey = (k: ApiKey) =>
    a.run(async () => {
      if (!window.confirm(`Revoke API key ${k.prefix} (${k.name})? Requests using it fail at once.`)) return;
      await api('DELETE', `/api/api-keys/${k.id}`);
      keys.reload();
    });
  const deleteClient = (c: Client) =>
    a.run(async () => {
      if (!window.confirm(`Delete client ${c.client_id} (${c.name})? Its tokens stop working at once.`)) return;
      await api('DELETE', `/api/clients/${c.client_id}`);
      clients.reload();
    });

  return (
    <>
      <PageHeader title="API keys & clients" />
      <p className="muted">Keys and client secrets are for servers only. They are shown once, here, at creation; the service keeps only their hashes.</p>
      {secret ? <ShownOnce label={secret.label} value={secret.value} onDone={() => setSecret(undefined)} /> : null}
      <Problem error={a.error} />
      <Card title="Platform API keys">
        <Problem error={keys.error} />
        {keys.data?.data.length ? (
          <table aria-label="API keys">
            <thead>
              <tr>
                <th scope="col">Prefix</th>
                <th scope="col">Name</th>
                <th scope="col">Environment</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((k) => (
                <tr key={k.id}>
                  <td>
                    <code>svc_{k.prefix}_…</code>
                  </td>
                  <td>{k.name}</td>
                  <td>{k.environment}</td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{when(k.created)}</td>
                  <td>
                    <button type="button" className="danger" onClick={() => void revokeKey(k)}>
                      Revoke <span className="sr-only">{k.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>No keys.</Empty>
        )}
        <form className="inline" onSubmit={createKey} aria-label="New API key">
          <Field label="Key name" value={keyName} onChange={setKeyName} required placeholder="catalog sync" />
          <Field label="Environment" value={env} onChange={setEnv} required />
          <fieldset className="inline">
            <legend>Scopes</legend>
            {KEY_SCOPES.map((s) => (
              <Check key={s} label={s} checked={scopes[s] ?? false} onChange={(v) => setScopes((x) => ({ ...x, [s]: v }))} />
            ))}
          </fieldset>
          <button type="submit" className="primary" disabled={a.busy}>
            Create API key
          </button>
        </form>
      </Card>
      <Card title="OAuth clients (Core API)">
        <Problem error={clients.error} />
        {clients.data?.data.length ? (
          <table aria-label="OAuth clients">
            <thead>
              <tr>
                <th scope="col">Client ID</th>
                <th scope="col">Name</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {clients.data.data.map((c) => (
                <tr key={c.client_id}>
                  <td>
                    <code>{c.client_id}</code>
                  </td>
                  <td>{c.name}</td>
                  <td>{c.scopes.join(', ')}</td>
                  <td>{when(c.created)}</td>
                  <td>
                    <button type="button" className="danger" onClick={() => void deleteClient(c)}>
                      Delete <span className="sr-only">{c.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>No clients.</Empty>
        )}
        <form className="inline" onSubmit={createClient} aria-label="New OAuth client">
          <Field label="Client name" value={clientName} onChange={setClientName} required placeholder="storefront backend" />
          <fieldset className="inline">
            <legend>Client scopes</legend>
            {CLIENT_SCOPES.map((s) => (
              <Check key={s} label={s} checked={clientScopes[s] ?? false} onChange={(v) => setClientScopes((x) => ({ ...x, [s]: v }))} />
            ))}
          </fieldset>
          <button type="submit" className="primary" disabled={a.busy}>
            Create client
          </button>
        </form>
      </Card>
    </>
  );
}
