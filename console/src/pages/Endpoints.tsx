import { useState, type FormEvent } from 'react';
import { api, type Endpoint, type Page } from '../api.ts';
import { Card, Check, Empty, Field, PageHeader, Problem, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

export function Endpoints({ session }: PageProps) {
  const endpoints = useLoad(() => api<Page<Endpoint>>('GET', '/api/model-endpoints'), []);
  const [name, setName] = useState('');
  const [isDefault, setIsDefault] = useState(false);
  const a = useAction();
  const create = (e: FormEvent) => {
    e.preventDefault();
    void a.run(async () => {
      await api('POST', '/api/model-endpoints', { endpoint_name: name, is_default: isDefault });
      setName('');
      endpoints.reload();
    });
  };
  return (
    <>
      <PageHeader title="Serving endpoints" />
      <Card title="Endpoints">
        <Problem error={endpoints.error} />
        {endpoints.data?.data.length ? (
          <table aria-label="Serving endpoints">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Default</th>
                <th scope="col">Serves</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.data.map((e) => (
                <tr key={e.id}>
                  <td>{e.endpoint_name}</td>
                  <td>{e.is_default ? 'default' : ''}</td>
                  <td>{e.model_version ? <a href="#/models">v{e.model_version}</a> : 'popular items (no version promoted)'}</td>
                  <td>{when(e.created)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>No endpoints yet.</Empty>
        )}
      </Card>
      {isAdmin(session.role) ? (
        <Card title="New endpoint">
          <form className="inline" onSubmit={create} aria-label="New serving endpoint">
            <Field label="Endpoint name" value={name} onChange={setName} required placeholder="main" />
            <Check label="Default endpoint" checked={isDefault} onChange={setIsDefault} />
            <button type="submit" className="primary" disabled={a.busy}>
              Create endpoint
            </button>
          </form>
          <Problem error={a.error} />
        </Card>
      ) : null}
    </>
  );
}
