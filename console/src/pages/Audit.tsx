import { useEffect, useState } from 'react';
import { listPage, type AuditEntry } from '../api.ts';
import { DataTable, Form } from '../table.tsx';
import { Card, Field, PageHeader, Problem, usePages, when } from '../ui.tsx';
import { hashParam } from './common.tsx';
import type { PageProps } from './index.tsx';

const fromHash = () => hashParam('resource');
/** Who made a change, in words: a console user by their email, else the API key by its prefix. */
const who = (actor: string | null) => (actor === null ? '–' : actor.startsWith('console:') ? `${actor.slice('console:'.length)} (console)` : `API key ${actor}`);
const json = (x: unknown) => <code className="json">{x === null || x === undefined ? '–' : JSON.stringify(x)}</code>;

export function Audit(_: PageProps) {
  const [draft, setDraft] = useState(fromHash());
  const [resource, setResource] = useState(fromHash());
  // A link to another resource's history (the address changes while this page is shown) shows it;
  // the page's own link in the navigation (no resource) shows none, as its address says.
  useEffect(() => {
    const follow = () => {
      if (!/^#\/?audit(\?|$)/.test(window.location.hash)) return;
      const r = fromHash();
      setDraft(r);
      setResource(r);
    };
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  const entries = usePages((after) => (resource ? listPage<AuditEntry>('/api/audit', after, { resource }) : Promise.resolve(undefined)), [resource]);
  // The resource shown is the address's (in place, as a context's is on Rules): a reload, or Back
  // to this page, shows it again, where until 2026-12-06 they showed the one the page was opened with.
  const show = () => {
    const r = draft.trim();
    if (r === resource) entries.reload();
    else setResource(r);
    window.history.replaceState(window.history.state, '', `#/audit${r ? `?${new URLSearchParams({ resource: r })}` : ''}`);
  };
  return (
    <>
      <PageHeader title="Audit history" />
      <Card>
        <Form label="Audit resource" onSubmit={show} submit="Show history" busy={entries.loading}>
          <Field
            label="Resource"
            value={draft}
            onChange={setDraft}
            required
            placeholder="rules/12"
            hint="rules/<id>, segments/<id>, experiments/<id>, rerank-controls/<context id>, synonyms/<id>, model-endpoints/<id>, clients/<client_id> or api-keys/<prefix>"
          />
        </Form>
      </Card>
      <Problem error={entries.error} />
      {entries.rows ? (
        <Card title={`History of ${resource}`}>
          <DataTable
            label="Audit entries"
            rows={entries.rows}
            more={entries.more}
            rowKey={(e) => String(e.id)}
            empty="No changes recorded."
            columns={[
              { header: 'When', cell: (e) => when(e.at) },
              { header: 'Who', cell: (e) => who(e.actor) },
              { header: 'Action', cell: (e) => e.action },
              { header: 'Before', cell: (e) => json(e.before) },
              { header: 'After', cell: (e) => json(e.after) },
            ]}
          />
        </Card>
      ) : null}
    </>
  );
}
