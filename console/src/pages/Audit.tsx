import { useState, type FormEvent } from 'react';
import { api, qs, type AuditEntry, type Page } from '../api.ts';
import { Card, Empty, Field, PageHeader, Problem, useLoad, when } from '../ui.tsx';
import type { PageProps } from './index.tsx';

const fromHash = () => new URLSearchParams(window.location.hash.split('?')[1] ?? '').get('resource') ?? '';

export function Audit(_: PageProps) {
  const [draft, setDraft] = useState(fromHash());
  const [resource, setResource] = useState(fromHash());
  const entries = useLoad(() => (resource ? api<Page<AuditEntry>>('GET', `/api/audit${qs({ resource, limit: 100 })}`) : Promise.resolve(undefined)), [resource]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setResource(draft.trim());
  };
  return (
    <>
      <PageHeader title="Audit history" />
      <Card>
        <form className="inline" onSubmit={submit} aria-label="Audit resource">
          <Field label="Resource" value={draft} onChange={setDraft} required placeholder="rules/12" hint="rules/<id>, segments/<id>, experiments/<id> or rerank-controls/<context id>" />
          <button type="submit" className="primary">
            Show history
          </button>
        </form>
      </Card>
      <Problem error={entries.error} />
      {entries.data ? (
        <Card title={`History of ${resource}`}>
          {entries.data.data.length ? (
            <table aria-label="Audit entries">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Before</th>
                  <th scope="col">After</th>
                </tr>
              </thead>
              <tbody>
                {entries.data.data.map((e) => (
                  <tr key={String(e.id)}>
                    <td>{when(e.at)}</td>
                    <td>{e.actor ?? '–'}</td>
                    <td>{e.action}</td>
                    <td>
                      <code className="json">{e.before === null || e.before === undefined ? '–' : JSON.stringify(e.before)}</code>
                    </td>
                    <td>
                      <code className="json">{e.after === null || e.after === undefined ? '–' : JSON.stringify(e.after)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <Empty>No changes recorded.</Empty>
          )}
        </Card>
      ) : null}
    </>
  );
}
