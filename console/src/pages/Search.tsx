import { useState } from 'react';
import { api, listAll, listPage, qs, type EventType, type SearchAnalytics, type SynonymSet } from '../api.ts';
import { DataTable, Form, RowButton, CancelButton } from '../table.tsx';
import { Card, Field, PageHeader, Problem, Select, thenReload, useAction, useLoad, usePages, when } from '../ui.tsx';
import { ChangedSince, DeletedSince, isAdmin, useEditing } from './common.tsx';
import type { PageProps } from './index.tsx';

/** The search settings a merchandiser tunes without a rebuild: synonym sets, and what people searched. */
export function Search({ session }: PageProps) {
  return (
    <>
      <PageHeader title="Synonyms & analytics" />
      <Synonyms admin={isAdmin(session.role)} />
      <Analytics />
    </>
  );
}

const phrases = (raw: string): string[] =>
  raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');

type SynonymFields = Partial<Pick<SynonymSet, 'type' | 'input' | 'synonyms'>>;
const label = (s: SynonymSet) => (s.input ? `${s.input} → ${s.synonyms.join(', ')}` : s.synonyms.join(' = '));

/**
 * A synonym set's fields, empty for a new one or those of `set` to edit: its type, input (one-way)
 * and phrases. An edit sends the fields changed in the form only (a type change with what that
 * type needs); `onSave` calls `done` once the set is stored. Its refusal shows beside it.
 */
function SynonymForm(props: { set?: SynonymSet; label: string; submit: string; onSave: (fields: SynonymFields, done: () => void) => Promise<unknown>; onCancel?: () => void }) {
  const cur = props.set;
  const [type, setType] = useState<SynonymSet['type']>(cur?.type ?? 'two_way');
  const [input, setInput] = useState(cur?.input ?? '');
  const [synonyms, setSynonyms] = useState(cur ? cur.synonyms.join(', ') : '');
  // The phrases the text stands for while it is as the form wrote it: the set's own, exactly (a
  // phrase may hold a comma, which the API allows: split at it, an untouched one was sent in two).
  const [written, setWritten] = useState({ text: cur ? cur.synonyms.join(', ') : '', list: cur?.synonyms ?? [] });
  const listOf = (text: string) => (text === written.text ? written.list : phrases(text));
  const act = useAction();
  const save = () => {
    const list = listOf(synonyms);
    let fields: SynonymFields;
    if (!cur) fields = type === 'one_way' ? { type, input, synonyms: list } : { synonyms: list };
    else if (type !== cur.type) fields = type === 'one_way' ? { type, input, synonyms: list } : { type, input: null, synonyms: list };
    else
      fields = {
        ...(type === 'one_way' && input !== (cur.input ?? '') ? { input } : {}),
        ...(list.join('\u0000') !== cur.synonyms.join('\u0000') ? { synonyms: list } : {}),
      };
    return act.run(() =>
      props.onSave(fields, () => {
        if (cur) return;
        setInput('');
        setSynonyms('');
      }),
    );
  };
  return (
    <Form label={props.label} onSubmit={save} submit={props.submit} busy={act.busy} error={act.error}>
      <Select
        label="Synonym type"
        value={type}
        onChange={(v) => {
          const next = v === 'one_way' ? 'one_way' : 'two_way';
          // A one-way set made two-way keeps its input among its phrases (as the API does when the phrases are not sent).
          const first = input.trim();
          const list = listOf(synonyms);
          if (next === 'two_way' && type === 'one_way' && first && !list.includes(first)) {
            const text = synonyms.trim() ? `${first}, ${synonyms}` : first;
            setWritten({ text, list: [first, ...list] });
            setSynonyms(text);
          }
          setType(next);
        }}
        options={[
          { value: 'two_way', label: 'two-way: each phrase finds the others' },
          { value: 'one_way', label: 'one-way: the input finds the synonyms' },
        ]}
      />
      {type === 'one_way' ? <Field label="Input" value={input} onChange={setInput} required placeholder="jacket" /> : null}
      <Field label="Phrases" value={synonyms} onChange={setSynonyms} required placeholder="sneaker, trainer, running shoe" hint="phrases separated by commas" focusOnMount={cur !== undefined} />
      <CancelButton onCancel={props.onCancel} />
    </Form>
  );
}

function Synonyms({ admin }: { admin: boolean }) {
  const list = usePages((after) => listPage<SynonymSet>('/api/synonyms', after), []);
  const edits = useEditing<SynonymSet>({ path: (id) => `/api/synonyms/${id}`, rows: list.rows });
  const { editing } = edits;
  const now = edits.now(list.rows);
  const a = useAction();
  const create = async (fields: SynonymFields, done: () => void) => {
    await api('POST', '/api/synonyms', fields);
    done();
    list.reload();
  };
  const update = (s: SynonymSet, fields: SynonymFields) => edits.save(fields, () => thenReload(api('PATCH', `/api/synonyms/${s.id}`, fields), list.reload));
  const remove = (s: SynonymSet) =>
    a.run(async () => {
      if (!window.confirm(`Delete the synonym set ${label(s)}? Searches stop using it within seconds; it cannot be restored.`)) return;
      await thenReload(api('DELETE', `/api/synonyms/${s.id}`), list.reload);
      edits.forget(s.id);
    });

  return (
    <>
      <Card title="Synonyms">
        <p className="muted">Applied to every Core search at query time, no rebuild: a change serves within seconds.</p>
        <DataTable
          label="Synonym sets"
          error={list.error}
          rows={list.rows}
          loading={list.loading}
          rowKey={(s) => s.id}
          empty="No synonym sets yet."
          columns={[
            { header: 'ID', cell: (s) => s.id },
            { header: 'Type', cell: (s) => (s.type === 'one_way' ? 'one-way' : 'two-way') },
            { header: 'Set', cell: label },
            { header: 'Updated', cell: (s) => when(s.updated_at) },
            {
              header: 'Actions',
              // A viewer reads the audit trail too, as a rule's: its History link.
              cell: (s) => (
                <>
                  {admin ? (
                    <>
                      <RowButton text="Edit" name={label(s)} onClick={() => edits.open(s)} /> <RowButton text="Delete" name={label(s)} onClick={() => remove(s)} danger />{' '}
                    </>
                  ) : null}
                  <a href={`#/audit?resource=synonyms/${s.id}`}>History</a>
                </>
              ),
            },
          ]}
          more={list.more}
        />
      </Card>
      {admin && editing && now ? (
        // Keyed by its opening: each Edit starts from that set's fields as listed.
        <Card title={`Edit synonym set #${editing.id}`}>
          <ChangedSince was={label(editing)} now={label(now)} what="Changed" />
          {edits.gone ? <DeletedSince what={`Synonym set ${label(now)} (#${editing.id})`} onBack={() => edits.back(list.reload)} /> : null}
          <SynonymForm key={edits.key} set={editing} label={`Edit synonym set ${label(now)}`} submit="Save synonyms" onSave={(fields) => update(editing, fields)} onCancel={edits.close} />
        </Card>
      ) : null}
      {admin ? (
        <Card title="New synonym set">
          <SynonymForm label="New synonym set" submit="Add synonyms" onSave={create} />
        </Card>
      ) : null}
      <Problem error={a.error} />
    </>
  );
}

const RANGES = [7, 30, 90];
const percent = (x: number): string => `${(100 * x).toFixed(1)} %`;
/** The UTC day `days - 1` days before today: a range of `days` days up to today. */
const dayFrom = (days: number): string => new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
const shown = (q: string) => (q === '' ? <em>(browse: no query)</em> : q);

/**
 * Which event type counts as a click until the user names one: `click`, unless the tenant has no
 * such type but has `view` (a shop that records views of what a search showed, as the demo shop).
 */
const defaultClickType = (names: readonly string[]): string => (names.includes('click') || !names.includes('view') ? 'click' : 'view');

function Analytics() {
  const [days, setDays] = useState('7');
  // The tenant's event types, offered for both fields (the defaults, click and purchase, may be none of them).
  const types = useLoad(() => listAll<EventType>('/api/event-types'), []);
  const typeNames = types.data?.data.map((t) => t.name) ?? [];
  const settled = types.data !== undefined || types.error !== undefined;
  const defaults = { click_type: settled ? defaultClickType(typeNames) : 'click', conversion_type: 'purchase' };
  // The fields as edited (undefined: not yet, the defaults show); the types on screen, once sent
  // (edits apply when the form is sent, not at each key).
  const [clickType, setClickType] = useState<string>();
  const [conversionType, setConversionType] = useState<string>();
  const [sent, setSent] = useState<{ click_type: string; conversion_type: string }>();
  // Until one is sent: the defaults, once the event types are read (or could not be), so the report is asked for once.
  const applied = sent ?? (settled ? defaults : undefined);
  const report = useLoad(
    () => (applied ? api<SearchAnalytics>('GET', `/api/analytics/searches${qs({ from: dayFrom(Number(days)), limit: 20, ...applied })}`) : new Promise<SearchAnalytics>(() => {})),
    [days, applied?.click_type, applied?.conversion_type],
  );
  // Unread, it says so: the fields offering nothing would not tell why.
  const hint = types.data
    ? typeNames.length
      ? `This tenant's event types: ${typeNames.join(', ')}.`
      : 'This tenant has no event types yet.'
    : types.error
      ? `This tenant's event types could not be read: ${types.error}`
      : undefined;
  const r = report.data;
  return (
    <>
      <Card title="Search analytics">
        <Form
          label="Search analytics range"
          onSubmit={() => {
            // The same types again: read again (a change since shows), as the state would not change.
            const next = { click_type: (clickType ?? defaults.click_type).trim(), conversion_type: (conversionType ?? defaults.conversion_type).trim() };
            if (applied && next.click_type === applied.click_type && next.conversion_type === applied.conversion_type) report.reload();
            else setSent(next);
          }}
          submit="Show"
          busy={report.loading}
          plain
        >
          <Select label="Range" value={days} onChange={setDays} options={RANGES.map((d) => ({ value: String(d), label: `the last ${d} days` }))} />
          <Field label="Clicks are events of type" value={clickType ?? defaults.click_type} onChange={setClickType} required suggestions={typeNames} hint={hint} />
          <Field label="Conversions are events of type" value={conversionType ?? defaults.conversion_type} onChange={setConversionType} required suggestions={typeNames} />
        </Form>
        <Problem error={report.error} />
        {r ? (
          <>
            <dl className="kv" aria-label="Search totals">
              <dt>Searches</dt>
              <dd>{r.totals.searches.toLocaleString()}</dd>
              <dt>Distinct queries</dt>
              <dd>{r.totals.queries.toLocaleString()}</dd>
              <dt>Without results</dt>
              <dd>{r.totals.no_results.toLocaleString()}</dd>
              <dt>Click-through rate</dt>
              <dd>{percent(r.totals.click_through_rate)}</dd>
              <dt>Conversion rate</dt>
              <dd>{percent(r.totals.conversion_rate)}</dd>
            </dl>
            <p className="muted">
              {r.from} to {r.to} (UTC). Events count for a search when they carry its <code>request_id</code>.
              {r.complete ? '' : ' The range held more rows than a report reads: these figures count part of it.'}
            </p>
          </>
        ) : null}
      </Card>
      <Card title="Top queries">
        <DataTable
          label="Top queries"
          rows={r?.top_queries}
          rowKey={(q) => q.query}
          empty={r ? 'No searches in this range.' : undefined}
          columns={[
            { header: 'Query', cell: (q) => shown(q.query) },
            { header: 'Searches', cell: (q) => q.searches },
            { header: 'Without results', cell: (q) => q.no_results },
            { header: 'Clicks', cell: (q) => q.clicks },
            { header: 'Click-through', cell: (q) => percent(q.click_through_rate) },
            { header: 'Conversions', cell: (q) => q.conversions },
            { header: 'Conversion rate', cell: (q) => percent(q.conversion_rate) },
          ]}
        />
      </Card>
      <Card title="Queries without results">
        <DataTable
          label="Queries without results"
          rows={r?.no_result_queries}
          rowKey={(q) => q.query}
          empty={r ? 'Every search in this range found something.' : undefined}
          columns={[
            { header: 'Query', cell: (q) => shown(q.query) },
            { header: 'Searches without results', cell: (q) => q.no_results },
            { header: 'Searches', cell: (q) => q.searches },
          ]}
        />
      </Card>
    </>
  );
}
