import { useState } from 'react';
import { api, listAll, listPage, type Endpoint, type Experiment, type Segment } from '../api.ts';
import { IntervalBar } from '../charts.tsx';
import { ActionButton, Form, CancelButton } from '../table.tsx';
import { BusyButton, Card, Empty, Field, Loading, PageHeader, Problem, Select, num, thenReload, useAction, useLoad, usePages } from '../ui.tsx';
import { ChangedSince, ContextPicker, audience, useChosenContext, isAdmin, NoContexts, useContexts, useEditing, useSegments } from './common.tsx';
import type { PageProps } from './index.tsx';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${(x * 100).toFixed(2)}%`);

function Results({ e }: { e: Experiment }) {
  const r = e.results;
  if (!r) return null;
  const types = [...new Set(r.variants.flatMap((v) => Object.keys(v.events)))];
  return (
    <div className="table-wrap">
      <table aria-label={`Results of ${e.name}`}>
        <thead>
          <tr>
            <th scope="col">Variant</th>
            <th scope="col" className="num">
              Traffic
            </th>
            <th scope="col" className="num">
              Requests
            </th>
            <th scope="col" className="num">
              Users
            </th>
            {types.map((t) => (
              <th scope="col" key={t}>
                {t}: rate per user, lift (95% interval)
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {r.variants.map((v, k) => (
            <tr key={v.name}>
              <th scope="row">
                {v.name} <span className="muted">({v.endpoint_name})</span>
              </th>
              <td className="num">{v.traffic_percent}%</td>
              <td className="num">{v.requests}</td>
              <td className="num">{v.users}</td>
              {types.map((t) => {
                const x = v.events[t];
                const lift = x?.lift;
                return (
                  <td key={t}>
                    {pct(x?.rate_per_user)}
                    {k > 0 && lift ? (
                      <span className="lift">
                        {' '}
                        lift {pct(lift.relative)} [{pct(lift.ci_95?.[0])}, {pct(lift.ci_95?.[1])}]{' '}
                        <IntervalBar low={lift.ci_95?.[0] ?? null} high={lift.ci_95?.[1] ?? null} point={lift.relative} label={`Lift of ${v.name} on ${t}`} />
                      </span>
                    ) : null}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      {r.sample_ratio_mismatch ? (
        <p className={r.sample_ratio_mismatch.mismatch ? 'problem' : 'muted'}>
          Sample ratio check: p = {num(r.sample_ratio_mismatch.p_value)}
          {r.sample_ratio_mismatch.mismatch ? ': users do not follow the configured split; do not trust the lift.' : ''}
        </p>
      ) : null}
    </div>
  );
}

/** Whom an experiment splits, as a picker offers it: everyone, or a segment's users (one named that is not in the list read, by id). */
function segmentOptions(segments: readonly Segment[], chosen: string) {
  return [
    { value: '', label: 'everyone' },
    ...segments.map((x) => ({ value: String(x.id), label: `segment ${x.name} (#${x.id})` })),
    ...(chosen && !segments.some((x) => String(x.id) === chosen) ? [{ value: chosen, label: `segment #${chosen}` }] : []),
  ];
}

type DraftFields = Partial<Pick<Experiment, 'name' | 'segment_id' | 'variants' | 'attribution_window_seconds'>>;

/**
 * A Draft's fields to edit: its name, whom it splits, the attribution window and each variant's
 * endpoint and traffic (the variants keep their names and rerank controls). Sends the fields
 * changed in the form only (the variants whole when one of them changed), against the Draft as
 * the form showed it when opened: `e` is read again meanwhile (a refused save, a Start elsewhere
 * on the page), and a field changed elsewhere since, left as it was in the form, is no change of
 * the user's to send back over it (until 2026-12-06 a refused save, which reads the list again,
 * made the next save rename the Draft back to the name the form had shown).
 */
function DraftForm(props: { e: Experiment; segments: readonly Segment[]; endpoints: readonly Endpoint[]; onSave: (fields: DraftFields) => Promise<unknown>; onCancel: () => void }) {
  const { e } = props;
  const [shown] = useState(e);
  // Its own action: a refused save is shown beside this form, what was typed kept (a Start's or Stop's, at the page's top).
  const act = useAction();
  const [name, setName] = useState(shown.name);
  const [segment, setSegment] = useState(shown.segment_id === null ? '' : String(shown.segment_id));
  const shownHours = String(Number((shown.attribution_window_seconds / 3600).toFixed(4)));
  const [hours, setHours] = useState(shownHours);
  const [variants, setVariants] = useState(shown.variants.map((v) => ({ endpoint: v.endpoint_name, traffic: String(v.traffic_percent) })));
  const endpointNames = [...new Set([...props.endpoints.map((x) => x.endpoint_name), ...shown.variants.map((v) => v.endpoint_name)])];
  const save = () => {
    const typed = shown.variants.map((v, i) => ({ endpoint_name: variants[i]?.endpoint ?? v.endpoint_name, traffic_percent: Number(variants[i]?.traffic ?? v.traffic_percent) }));
    const variantsChanged = typed.some((v, i) => v.endpoint_name !== shown.variants[i]?.endpoint_name || v.traffic_percent !== shown.variants[i]?.traffic_percent);
    // The variants as they are now (their names and rerank controls) when they are still those shown, else as shown.
    const base = e.variants.length === shown.variants.length && e.variants.every((v, i) => v.name === shown.variants[i]?.name) ? e.variants : shown.variants;
    const next = base.map((v, i) => ({ ...v, ...typed[i] }));
    const window = Math.round(Number(hours) * 3600);
    const segmentId = segment ? Number(segment) : null;
    return act.run(() =>
      props.onSave({
        ...(name !== shown.name ? { name } : {}),
        ...(segmentId !== shown.segment_id ? { segment_id: segmentId } : {}),
        // The window as shown (hours to 4 decimals) is sent only once it is changed.
        ...(hours !== shownHours && window !== shown.attribution_window_seconds ? { attribution_window_seconds: window } : {}),
        ...(variantsChanged ? { variants: next } : {}),
      }),
    );
  };
  const setVariant = (i: number, change: Partial<{ endpoint: string; traffic: string }>) => setVariants((vs) => vs.map((v, j) => (j === i ? { ...v, ...change } : v)));
  return (
    <Form label={`Edit experiment ${e.name}`} onSubmit={save} submit="Save experiment" busy={act.busy} error={act.error}>
      <Field label="Experiment name" value={name} onChange={setName} required focusOnMount />
      <Select label="For" value={segment} onChange={setSegment} options={segmentOptions(props.segments, segment)} />
      <Field label="Attribution window (hours)" type="number" step="any" min={1 / 60} max={720} value={hours} onChange={setHours} required />
      {shown.variants.map((v, i) => (
        <span key={v.name} className="inline">
          <Select
            label={`${v.name}: endpoint`}
            value={variants[i]?.endpoint ?? v.endpoint_name}
            onChange={(endpoint) => setVariant(i, { endpoint })}
            options={endpointNames.map((x) => ({ value: x, label: x }))}
          />
          <Field label={`${v.name}: traffic %`} type="number" step="0.01" min={0.01} max={100} value={variants[i]?.traffic ?? ''} onChange={(traffic) => setVariant(i, { traffic })} required />
        </span>
      ))}
      <CancelButton onCancel={props.onCancel} />
    </Form>
  );
}

export function Experiments({ session }: PageProps) {
  const experiments = usePages((after) => listPage<Experiment>('/api/experiments', after), []);
  const contexts = useContexts();
  const segments = useSegments();
  const endpoints = useLoad(() => listAll<Endpoint>('/api/model-endpoints'), []);
  const [name, setName] = useState('');
  const [contextId, setContextId] = useChosenContext();
  const [a1, setA1] = useState('');
  const [b1, setB1] = useState('');
  const [split, setSplit] = useState('50');
  const [segment, setSegment] = useState('');
  const edits = useEditing<Experiment>();
  const a = useAction();
  // The New experiment form's own: its refusal shown beside it.
  const make = useAction();
  const admin = isAdmin(session.role);
  const eps = endpoints.data?.data ?? [];
  const ctx = contextId || String(contexts.data?.data[0]?.id ?? '');

  const create = () =>
    make.run(async () => {
      const control = a1 || eps[0]?.endpoint_name;
      const treatment = b1 || eps[1]?.endpoint_name || control;
      await api('POST', '/api/experiments', {
        name,
        context_id: Number(ctx),
        segment_id: segment ? Number(segment) : null,
        variants: [
          // What the treatment leaves, to the hundredth (100 - 8.04 is 91.96000000000001 in binary floating point).
          { name: 'control', endpoint_name: control, traffic_percent: Math.round((100 - Number(split)) * 100) / 100 },
          { name: 'treatment', endpoint_name: treatment, traffic_percent: Number(split) },
        ],
      });
      setName('');
      experiments.reload();
    });
  const update = (x: Experiment, fields: DraftFields) => edits.save(fields, () => thenReload(api('PATCH', `/api/experiments/${x.id}`, fields), experiments.reload));
  const setStatus = (x: Experiment, status: 'Running' | 'Stopped') =>
    a.run(async () => {
      // Stopping ends it for good (a stopped experiment does not run again).
      if (status === 'Stopped' && !window.confirm(`Stop experiment ${x.name} (#${x.id})? It cannot be started again.`)) return;
      await thenReload(api('PATCH', `/api/experiments/${x.id}`, { status }), experiments.reload);
      // Started here with its edit form open: the form closes (its changes unsent), not said to be done elsewhere.
      edits.forget(x.id);
    });

  return (
    <>
      <PageHeader title="Experiments" />
      {/* Each its own: a refused Start or Stop reads the list again, and a failed read must not hide the refusal (until 2026-12-06 it did). */}
      <Problem error={experiments.error} />
      <Problem error={a.error} />
      {experiments.rows?.length ? (
        experiments.rows.map((x) => (
          <Card key={x.id} title={`${x.name} · context #${x.context_id} · ${x.status}`}>
            {/* Whom it splits: everyone, or a segment's users (a segment's deletion is refused naming it). */}
            <p className="muted">For {audience(x.segment_id, segments.data?.data)}.</p>
            <Results e={x} />
            {admin && x.status === 'Draft' && edits.editing?.id === x.id ? (
              <>
                {/* The Draft as it opened (`edits.editing`) against it as read since (`x`, whose name the card's title and the form's label say). */}
                <ChangedSince was={edits.editing.name} now={x.name} />
                <DraftForm key={edits.key} e={x} segments={segments.data?.data ?? []} endpoints={eps} onSave={(fields) => update(x, fields)} onCancel={edits.close} />
              </>
            ) : null}
            {admin && x.status !== 'Draft' && edits.editing?.id === x.id ? (
              // Started (or stopped) elsewhere while its edit form was open: the form, a Draft's only, is gone;
              // said so, not closed in silence with what was typed (until 2026-12-08).
              <div className="problem" role="alert">
                <p>
                  {x.name} was {x.status === 'Running' ? 'started' : 'stopped'} elsewhere (in another tab, or through the API) while its edit form was open: only a Draft is edited, and the changes
                  typed there were not sent.
                </p>
                <button type="button" onClick={() => edits.forget(x.id)}>
                  Dismiss
                </button>
              </div>
            ) : null}
            {admin && x.status === 'Draft' ? <ActionButton onClick={() => setStatus(x, 'Running')}>Start {x.name}</ActionButton> : null}
            {/* Shown while its form is open too: the focus goes back to it as the form closes (it fell to the page's start with the button). */}
            {admin && x.status === 'Draft' ? <ActionButton onClick={() => edits.open(x)}>Edit {x.name}</ActionButton> : null}
            {admin && x.status === 'Running' ? <ActionButton onClick={() => setStatus(x, 'Stopped')}>Stop {x.name}</ActionButton> : null}
          </Card>
        ))
      ) : experiments.rows ? (
        <Card>
          <Empty>No experiments yet.</Empty>
        </Card>
      ) : (
        // Not read yet, or not read at all (its error above): not said to be none.
        <Loading show={experiments.loading} />
      )}
      {experiments.more ? (
        <BusyButton busy={experiments.more.busy} onClick={experiments.more.load}>
          Load more
        </BusyButton>
      ) : null}
      {admin ? (
        <Card title="New A/B experiment">
          {/* An experiment runs in a context: without one, where to make it (not a picker with nothing to pick). */}
          {!ctx && contexts.data ? (
            <NoContexts admin />
          ) : (
            <Form label="New experiment" onSubmit={create} submit="Create experiment" busy={make.busy} error={make.error} disabled={!eps.length || !ctx}>
              <Field label="Experiment name" value={name} onChange={setName} required />
              <ContextPicker value={ctx} onChange={setContextId} contexts={contexts.data?.data ?? []} error={contexts.error} />
              <Select label="Control endpoint" value={a1 || eps[0]?.endpoint_name || ''} onChange={setA1} options={eps.map((x) => ({ value: x.endpoint_name, label: x.endpoint_name }))} />
              <Select
                label="Treatment endpoint"
                value={b1 || eps[1]?.endpoint_name || eps[0]?.endpoint_name || ''}
                onChange={setB1}
                options={eps.map((x) => ({ value: x.endpoint_name, label: x.endpoint_name }))}
              />
              <Field label="Treatment traffic %" type="number" step="0.01" min={0.01} max={99.99} value={split} onChange={setSplit} />
              <Select label="For" value={segment} onChange={setSegment} options={segmentOptions(segments.data?.data ?? [], segment)} />
            </Form>
          )}
        </Card>
      ) : null}
    </>
  );
}
