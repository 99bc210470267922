import { useState } from 'react';
import { api, listPage, type Segment } from '../api.ts';
import { DataTable, Form, RowButton, CancelButton } from '../table.tsx';
import { Card, Field, PageHeader, Problem, thenReload, useAction, usePages, when } from '../ui.tsx';
import { ChangedSince, DeletedSince, isAdmin, useEditing } from './common.tsx';
import type { PageProps } from './index.tsx';

type Leaf = { event_type: string; min_count: number; within_days: number };
type SegmentFields = Partial<Pick<Segment, 'name' | 'description' | 'definition'>>;
const isLeaf = (d: Segment['definition']): d is Leaf => 'event_type' in d;
const sameLeaf = (a: Leaf, b: Segment['definition']): boolean => isLeaf(b) && a.event_type === b.event_type && a.min_count === b.min_count && a.within_days === b.within_days;

/**
 * A segment's fields, empty for a new one or those of `segment` to edit: name, description and a
 * definition of one event type (at least so many events within so many days). A definition of
 * all / any (made through the API) is kept: the form shows it and sends none. An edit sends the
 * fields changed in the form only; `onSave` calls `done` once the segment is stored.
 */
function SegmentForm(props: { segment?: Segment; label: string; submit: string; onSave: (fields: SegmentFields, done: () => void) => Promise<unknown>; onCancel?: () => void }) {
  const s = props.segment;
  const leaf = s && isLeaf(s.definition) ? s.definition : undefined;
  const [name, setName] = useState(s?.name ?? '');
  const [description, setDescription] = useState(s?.description ?? '');
  const [eventType, setEventType] = useState(leaf?.event_type ?? 'purchase');
  const [minCount, setMinCount] = useState(String(leaf?.min_count ?? 1));
  const [days, setDays] = useState(String(leaf?.within_days ?? 30));
  const editsDefinition = !s || leaf !== undefined;
  // Its own action: a refused save is shown beside this form, what was typed kept (a row action's, below the page).
  const act = useAction();
  const save = () => {
    const definition: Leaf = { event_type: eventType, min_count: Number(minCount), within_days: Number(days) };
    const fields: SegmentFields = s
      ? {
          ...(name !== s.name ? { name } : {}),
          ...(description !== s.description ? { description } : {}),
          ...(editsDefinition && !sameLeaf(definition, s.definition) ? { definition } : {}),
        }
      : { name, description, definition };
    return act.run(() =>
      props.onSave(fields, () => {
        if (s) return;
        setName('');
        setDescription('');
      }),
    );
  };
  return (
    <Form label={props.label} onSubmit={save} submit={props.submit} busy={act.busy} error={act.error}>
      <Field label="Segment name" value={name} onChange={setName} required placeholder="buyers" focusOnMount={s !== undefined} />
      <Field label="Description" value={description} onChange={setDescription} />
      {editsDefinition ? (
        <>
          <Field label="Event type" value={eventType} onChange={setEventType} required />
          <Field label="At least (events)" type="number" min={1} max={500} value={minCount} onChange={setMinCount} />
          <Field label="Within (days)" type="number" min={1} max={365} value={days} onChange={setDays} />
        </>
      ) : (
        <p className="muted">
          Definition, kept as it is: <code>{JSON.stringify(s?.definition)}</code>.
        </p>
      )}
      <CancelButton onCancel={props.onCancel} />
    </Form>
  );
}

export function Segments({ session }: PageProps) {
  const segments = usePages((after) => listPage<Segment>('/api/segments', after), []);
  const edits = useEditing<Segment>({ path: (id) => `/api/segments/${id}`, rows: segments.rows });
  const { editing } = edits;
  const now = edits.now(segments.rows);
  const a = useAction();
  const create = async (fields: SegmentFields, done: () => void) => {
    await api('POST', '/api/segments', fields);
    done();
    segments.reload();
  };
  const update = (s: Segment, fields: SegmentFields) => edits.save(fields, () => thenReload(api('PATCH', `/api/segments/${s.id}`, fields), segments.reload));
  // A segment a rule or experiment names is not deleted (409): the message says which.
  const remove = (s: Segment) =>
    a.run(async () => {
      if (!window.confirm(`Delete segment ${s.name} (#${s.id})? It cannot be restored.`)) return;
      await thenReload(api('DELETE', `/api/segments/${s.id}`), segments.reload);
      edits.forget(s.id);
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
                      <RowButton text="Edit" name={s.name} onClick={() => edits.open(s)} /> <RowButton text="Delete" name={s.name} onClick={() => remove(s)} danger />{' '}
                    </>
                  ) : null}
                  <a href={`#/audit?resource=segments/${s.id}`}>History</a>
                </>
              ),
            },
          ]}
        />
      </Card>
      {admin && editing && now ? (
        // Keyed by its opening: each Edit starts from that segment's fields as listed.
        <Card title={`Edit segment ${now.name} (#${editing.id})`}>
          <ChangedSince was={editing.name} now={now.name} />
          {edits.gone ? <DeletedSince what={`Segment ${now.name} (#${editing.id})`} onBack={() => edits.back(segments.reload)} /> : null}
          <SegmentForm key={edits.key} segment={editing} label={`Edit segment ${now.name}`} submit="Save segment" onSave={(fields) => update(editing, fields)} onCancel={edits.close} />
        </Card>
      ) : null}
      {admin ? (
        <Card title="New segment">
          <SegmentForm label="New segment" submit="Create segment" onSave={create} />
        </Card>
      ) : null}
      <Problem error={a.error} />
    </>
  );
}
