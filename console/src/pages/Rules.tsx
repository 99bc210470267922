import { useState } from 'react';
import { api, listPage, type Rule, type Segment } from '../api.ts';
import { DataTable, Form, RowButton, CancelButton } from '../table.tsx';
import { Card, Field, PageHeader, Problem, Select, thenReload, useAction, usePages, when } from '../ui.tsx';
import { ChangedSince, ContextPicker, DeletedSince, audience, useChosenContext, NewContext, isAdmin, parseValue, useContexts, useEditing, useSegments } from './common.tsx';
import type { PageProps } from './index.tsx';

const OPS = ['eq', 'neq', 'in', 'gte', 'lte', 'exists'];

/** When a rule applies: always, or its window (starts_at, ends_at), said as over or not begun yet. */
function schedule(r: Rule): string {
  const now = Date.now() / 1000;
  if (r.ends_at !== null && r.ends_at !== undefined && r.ends_at <= now) return `ended ${when(r.ends_at)}`;
  const from = r.starts_at !== null && r.starts_at !== undefined ? `${r.starts_at > now ? 'from' : 'since'} ${when(r.starts_at)}` : '';
  const until = r.ends_at !== null && r.ends_at !== undefined ? `until ${when(r.ends_at)}` : '';
  return [from, until].filter(Boolean).join(' ') || 'always';
}

/**
 * A condition's value as the form's text field takes it (parseValue's inverse): text that would
 * read as a number or true/false, or that begins with a quote or a space, in quotes; a list
 * comma-separated.
 */
function valueText(value: unknown): string {
  const one = (v: unknown): string => (typeof v === 'string' && v !== '' && (v === 'true' || v === 'false' || !Number.isNaN(Number(v)) || v.startsWith('"') || v !== v.trim()) ? `"${v}"` : String(v));
  return Array.isArray(value) ? value.map(one).join(', ') : value === undefined ? '' : one(value);
}
/** The one condition the form can show and send back as it is (not a list item holding a comma, say); else none. */
function editable(r: Rule | undefined): Rule['conditions'][number] | undefined {
  const c = r?.conditions.length === 1 ? r.conditions[0] : undefined;
  // A line break a text field would take out of the value makes it one the form cannot send back either.
  const text = c ? valueText(c.value) : '';
  return c && !/[\r\n]/.test(text) && JSON.stringify(parseValue(c.op, text)) === JSON.stringify(c.value) ? c : undefined;
}

/** The browser's time zone, in which a rule's From and Until are typed ("UTC", "Europe/Berlin"). */
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Unix seconds as a datetime-local input's value (the browser's zone, to the minute); '' for none. */
const localInput = (s: number | null | undefined): string => {
  if (s === null || s === undefined) return '';
  const d = new Date(s * 1000);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
/** A datetime-local input's value (the browser's zone) as Unix seconds; null for none. */
const fromLocalInput = (v: string): number | null => (v ? Math.floor(new Date(v).getTime() / 1000) : null);

/**
 * A value's JSON with each object's keys in one order: a condition as read back need not list its
 * keys as the form writes them (DynamoDB keeps a map's keys in no order), and is the same condition.
 */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );

type RuleFields = Partial<Pick<Rule, 'name' | 'boost' | 'segment_id' | 'starts_at' | 'ends_at' | 'conditions'>>;

/**
 * A rule's fields, empty for a new one or those of `rule` to edit: its name, one condition, boost,
 * whom it is for (everyone or a segment's users) and when (from, until; blank for always). A rule
 * whose conditions the form cannot show (several, made through the API) keeps them: the form says
 * them and sends none. An edit sends the fields changed in the form only, so a change made
 * elsewhere to another field meanwhile stands. `onSave` calls `done` once the rule is stored.
 */
function RuleForm(props: {
  rule?: Rule;
  segments: readonly Segment[];
  label: string;
  submit: string;
  /** Stores the rule (throws when refused: the form shows why beside itself, keeping what was typed). */
  onSave: (fields: RuleFields, done: () => void) => Promise<unknown>;
  onCancel?: () => void;
}) {
  const r = props.rule;
  const one = r ? editable(r) : undefined;
  const [name, setName] = useState(r?.name ?? '');
  const [field, setField] = useState(one?.field ?? 'metadata.brand');
  const [op, setOp] = useState<string>(one?.op ?? 'eq');
  const [value, setValue] = useState(one ? valueText(one.value) : '');
  // A rule as made promotes what it matches until its boost is chosen (it started at 0, which takes those items out of every answer).
  const [boost, setBoost] = useState(r ? String(r.boost) : '2');
  const [segment, setSegment] = useState(r?.segment_id ? String(r.segment_id) : '');
  const [from, setFrom] = useState(localInput(r?.starts_at));
  const [until, setUntil] = useState(localInput(r?.ends_at));
  const editsConditions = !r || one !== undefined;
  // Its own action: a refused save is shown beside this form (a row action's, below the page).
  const act = useAction();
  const save = () => {
    const fields: RuleFields = {
      name,
      boost: Number(boost),
      segment_id: segment ? Number(segment) : null,
      starts_at: fromLocalInput(from),
      ends_at: fromLocalInput(until),
      ...(editsConditions ? { conditions: [{ field, op: op as Rule['conditions'][number]['op'], value: parseValue(op, value) as Rule['conditions'][number]['value'] }] } : {}),
    };
    // A window's time shown to the minute is sent back as it was unless it was changed.
    if (r && fields.starts_at !== null && localInput(r.starts_at) === from) fields.starts_at = r.starts_at;
    if (r && fields.ends_at !== null && localInput(r.ends_at) === until) fields.ends_at = r.ends_at;
    const changed = r ? (Object.fromEntries(Object.entries(fields).filter(([k, v]) => canonical(v) !== canonical(r[k as keyof Rule]))) as RuleFields) : fields;
    return act.run(() =>
      props.onSave(changed, () => {
        if (r) return;
        setName('');
        setValue('');
      }),
    );
  };
  // A segment the rule names that is not in the list read (deleted since, or not read yet) is still offered, by id.
  const segmentOptions = [
    { value: '', label: 'everyone' },
    ...props.segments.map((x) => ({ value: String(x.id), label: `segment ${x.name} (#${x.id})` })),
    ...(segment && !props.segments.some((x) => String(x.id) === segment) ? [{ value: segment, label: `segment #${segment}` }] : []),
  ];
  return (
    <Form label={props.label} onSubmit={save} submit={props.submit} busy={act.busy} error={act.error}>
      <Field label="Rule name" value={name} onChange={setName} required placeholder="no Bolt" focusOnMount={r !== undefined} />
      {editsConditions ? (
        <>
          <Field label="Condition field" value={field} onChange={setField} required hint="category, name, created or metadata.<key>" />
          <Select label="Condition operator" value={op} onChange={setOp} options={OPS.map((o) => ({ value: o, label: o }))} />
          <Field
            label="Condition value"
            value={value}
            onChange={setValue}
            // Every operator but exists compares with a value: an empty one would make a rule that matches nothing.
            required={op !== 'exists'}
            hint={op === 'exists' ? 'true, or false for "absent"' : 'a list for in: a, b, c; "42" in quotes is text'}
          />
        </>
      ) : (
        <p className="muted">Conditions, kept as they are: {r ? conditionsText(r) : ''}.</p>
      )}
      <Field label="Boost" type="number" step="any" min={0} value={boost} onChange={setBoost} required />
      <Select label="For" value={segment} onChange={setSegment} options={segmentOptions} />
      <Field label="From" type="datetime-local" value={from} onChange={setFrom} hint={`blank: no start; ${ZONE} time`} />
      <Field label="Until" type="datetime-local" value={until} onChange={setUntil} hint={`blank: no end; ${ZONE} time`} />
      <CancelButton onCancel={props.onCancel} />
    </Form>
  );
}

const conditionsText = (r: Rule): string => r.conditions.map((c) => `${c.field} ${c.op} ${JSON.stringify(c.value)}`).join(' and ') || 'every item';

export function Rules({ session }: PageProps) {
  const contexts = useContexts();
  const segments = useSegments();
  const [contextId, setContextId] = useChosenContext();
  const ctx = contextId || String(contexts.data?.data[0]?.id ?? '');
  const rules = usePages((after) => (ctx ? listPage<Rule>('/api/rules', after, { contextId: ctx }) : Promise.resolve(undefined)), [ctx]);
  const edits = useEditing<Rule>({ path: (id) => `/api/rules/${id}`, rows: rules.rows });
  const { editing } = edits;
  const now = edits.now(rules.rows);
  const a = useAction();
  const admin = isAdmin(session.role);

  const create = async (fields: RuleFields, done: () => void) => {
    await api('POST', '/api/rules', { ...fields, context_id: Number(ctx) });
    done();
    rules.reload();
  };
  const update = (r: Rule, fields: RuleFields) => edits.save(fields, () => thenReload(api('PATCH', `/api/rules/${r.id}`, fields), rules.reload));
  const toggle = (r: Rule) =>
    a.run(async () => {
      await thenReload(api('PATCH', `/api/rules/${r.id}`, { enabled: !r.enabled }), rules.reload);
    });
  const remove = (r: Rule) =>
    a.run(async () => {
      if (!window.confirm(`Delete rule ${r.name} (#${r.id})? It stops applying at once and cannot be restored.`)) return;
      await thenReload(api('DELETE', `/api/rules/${r.id}`), rules.reload);
      edits.forget(r.id);
    });
  const segmentList = segments.data?.data ?? [];

  return (
    <>
      <PageHeader title="Rules" />
      <Card>
        <div className="inline">
          <ContextPicker
            value={ctx}
            onChange={(id) => {
              edits.forget();
              setContextId(id);
            }}
            contexts={contexts.data?.data ?? []}
            error={contexts.error}
          />
          {admin ? (
            <NewContext
              disabled={false}
              onCreated={(c) => {
                contexts.created(c);
                edits.forget();
                setContextId(String(c.id));
              }}
            />
          ) : null}
        </div>
        <p className="muted">Rules apply to recommendations and searches that name the context. Boost above 1 promotes, below 1 demotes, 0 excludes.</p>
      </Card>
      <Card title="Rules of this context">
        <DataTable
          label="Rules"
          error={rules.error}
          rows={rules.rows}
          loading={rules.loading}
          more={rules.more}
          rowKey={(r) => r.id}
          // Not while the contexts are read, or could not be (the picker says so).
          empty={ctx ? 'No rules in this context.' : contexts.data ? (admin ? 'Create a context first.' : 'No contexts yet: an admin creates them.') : null}
          columns={[
            { header: 'ID', cell: (r) => r.id },
            { header: 'Name', cell: (r) => r.name },
            { header: 'Conditions', cell: conditionsText },
            { header: 'Boost', cell: (r) => r.boost },
            // A rule for a segment's users, or within a time window, said so: it looked like one for everyone, always
            // (until 2026-12-06), though a segment's deletion is refused naming it.
            { header: 'For', cell: (r) => audience(r.segment_id, segments.data?.data) },
            { header: 'When', cell: schedule },
            { header: 'Enabled', cell: (r) => (r.enabled ? 'yes' : 'no') },
            { header: 'Created', cell: (r) => when(r.created) },
            {
              header: 'Actions',
              // A viewer reads the audit trail too: its History link (until 2026-12-06 admins' alone).
              cell: (r) => (
                <>
                  {admin ? (
                    <>
                      <RowButton text="Edit" name={r.name} onClick={() => edits.open(r)} /> <RowButton text={r.enabled ? 'Disable' : 'Enable'} name={r.name} onClick={() => toggle(r)} />{' '}
                      <RowButton text="Delete" name={r.name} onClick={() => remove(r)} danger />{' '}
                    </>
                  ) : null}
                  <a href={`#/audit?resource=rules/${r.id}`}>History</a>
                </>
              ),
            },
          ]}
        />
      </Card>
      {/* Of the context shown only: one chosen by the address (the navigation's Rules link, Back) leaves the picker's onChange out. */}
      {admin && editing && now && String(editing.context_id) === ctx ? (
        // Keyed by its opening: each Edit starts from that rule's fields as listed.
        <Card title={`Edit rule ${now.name} (#${editing.id})`}>
          <ChangedSince was={editing.name} now={now.name} />
          {edits.gone ? <DeletedSince what={`Rule ${now.name} (#${editing.id})`} onBack={() => edits.back(rules.reload)} /> : null}
          <RuleForm key={edits.key} rule={editing} segments={segmentList} label={`Edit rule ${now.name}`} submit="Save rule" onSave={(fields) => update(editing, fields)} onCancel={edits.close} />
        </Card>
      ) : null}
      {admin && ctx ? (
        <Card title="New rule">
          <RuleForm segments={segmentList} label="New rule" submit="Create rule" onSave={create} />
        </Card>
      ) : null}
      <Problem error={a.error} />
    </>
  );
}
