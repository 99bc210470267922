import { useEffect, useRef, useState } from 'react';
import { ACTIVE_JOB, api, listAll, listPage, type Job, type JobLogs, type LogLine, type Template } from '../api.ts';
import { LineChart, type Series } from '../charts.tsx';
import { DataTable, Form } from '../table.tsx';
import { BusyButton, Card, Empty, Field, PageHeader, Problem, Select, num, useAction, useInterval, useLoad, usePages, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

/** Log lines a request reads at most. */
const LOG_PAGE = 1000;

/** Loss and validation points, read from the run's log lines as the trainer writes them. */
export function curves(lines: LogLine[]): Series[] {
  const loss: Series = { name: 'training loss', points: [] };
  const holdoutLoss: Series = { name: 'training loss (holdout fit)', points: [] };
  const validation: Series = { name: 'validation nDCG@10', points: [] };
  for (const l of lines) {
    const holdout = l.message.startsWith('holdout: ');
    const m = /\bloss ([0-9.eE+-]+)/.exec(l.message);
    if (m) (holdout ? holdoutLoss : loss).points.push({ x: (holdout ? holdoutLoss : loss).points.length + 1, y: Number(m[1]) });
    const v = /validation: .*?nDCG@10 ([0-9.]+)/.exec(l.message);
    if (v && !holdout) validation.points.push({ x: validation.points.length + 1, y: Number(v[1]) });
  }
  return [loss, holdoutLoss, validation].filter((s) => s.points.length > 0);
}

function RunDetail({ name, onChanged, admin }: { name: string; onChanged: () => void; admin: boolean }) {
  const [job, setJob] = useState<Job>();
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<string>();
  const stop = useAction();

  /** Where this run's log was read to: its cursor (null before the first line), and whether the run's log has ended. */
  const read = useRef<{ name: string; after: string | null; ended: boolean }>({ name, after: null, ended: false });
  const poll = async () => {
    try {
      const j = await api<Job>('GET', `/api/training-jobs/${encodeURIComponent(name)}`);
      // The log followed: each poll reads on from where the last one stopped. While the run goes
      // on, the page at the end has a cursor to ask with again; once it has ended, none.
      const at = read.current;
      const got: LogLine[] = [];
      let after = at.after;
      let ended = at.ended;
      while (!ended) {
        const page: JobLogs = await api('GET', `/api/training-jobs/logs/${encodeURIComponent(name)}?limit=${LOG_PAGE}${after ? `&cursor=${encodeURIComponent(after)}` : ''}`);
        got.push(...page.lines);
        // No cursor before any line was read is an empty log, to be read from its start again.
        if (page.next_cursor === null) ended = after !== null || got.length > 0;
        else after = page.next_cursor;
        if (page.next_cursor === null || page.lines.length < LOG_PAGE) break;
      }
      if (read.current !== at || at.name !== name) return; // another run shown meanwhile
      read.current = { name, after, ended };
      if (got.length) setLines((prev) => [...prev, ...got]);
      setJob((prev) => {
        if (prev && prev.status !== j.status) onChanged();
        return j;
      });
      setError(undefined);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new run name starts a fresh view; `poll` reads the name it closes over.
  useEffect(() => {
    setJob(undefined);
    setLines([]);
    read.current = { name, after: null, ended: false };
    void poll();
  }, [name]);
  useInterval(() => void poll(), 1000, !job || ACTIVE_JOB.has(job.status));

  const series = curves(lines);
  return (
    <Card title={`Run ${name}`}>
      {/* Each its own: a Stop refused while the run cannot be read again must not be hidden under the read's error (until 2026-12-06 it was). */}
      <Problem error={error} />
      <Problem error={stop.error} />
      {job ? (
        <>
          <dl className="kv">
            <dt>Status</dt>
            <dd>
              <span className={`badge ${job.status}`} data-testid="run-status">
                {job.status}
              </span>
            </dd>
            <dt>Progress</dt>
            <dd>
              <progress max={1} value={job.progress} aria-label="Training progress" /> {Math.round(job.progress * 100)}%
            </dd>
            <dt>Algorithm</dt>
            {/* Runs stored before `algorithm` was an option trained EASE. */}
            <dd>{job.options.algorithm ?? 'ease'}</dd>
            <dt>Started</dt>
            <dd>{when(job.started_at)}</dd>
            <dt>Finished</dt>
            <dd>{when(job.finished_at)}</dd>
            {job.model_version ? (
              <>
                <dt>Version</dt>
                <dd>
                  <a href="#/models">v{job.model_version}</a>
                </dd>
              </>
            ) : null}
            {job.error ? (
              <>
                <dt>Error</dt>
                <dd className="problem">{job.error}</dd>
              </>
            ) : null}
          </dl>
          {admin && (job.status === 'Queued' || job.status === 'InProgress') ? (
            <BusyButton busy={stop.busy} onClick={() => stop.run(() => api('POST', `/api/training-jobs/${encodeURIComponent(name)}/stop`).then(poll))}>
              Stop run
            </BusyButton>
          ) : null}
          {series.length ? (
            <LineChart title="Loss and validation while training" series={series} xLabel="step" independent={series.length > 1} />
          ) : ACTIVE_JOB.has(job.status) ? (
            <p className="muted">The chart fills in as the run reports loss and validation points.</p>
          ) : (
            <p className="muted">No chart: this run reported no loss or validation points (ease, item_knn and popularity fit without them).</p>
          )}
          {job.metrics ? (
            <table aria-label="Holdout metrics">
              <tbody>
                {Object.entries(job.metrics).map(([k, v]) => (
                  <tr key={k}>
                    <th scope="row">{k}</th>
                    <td className="num">{num(v)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          <details open>
            <summary>Log ({lines.length} lines)</summary>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable log must be reachable by keyboard to scroll it (WCAG 2.1.1). */}
            <pre className="log" aria-live="polite" tabIndex={0}>
              {/* Each line's time says its zone, as every time the console shows (a run's lines were bare local times). */}
              {lines.map((l) => `${new Date(l.ts * 1000).toLocaleTimeString(undefined, { timeZoneName: 'short' })}  ${l.message}`).join('\n')}
            </pre>
          </details>
        </>
      ) : (
        <p role="status">Loading…</p>
      )}
    </Card>
  );
}

export function Training({ session }: PageProps) {
  const jobs = usePages((after) => listPage<Job>('/api/training-jobs', after), []);
  const templates = useLoad(() => listAll<Template>('/api/events/templates'), []);
  const published = templates.data?.data.filter((t) => t.status === 'Published') ?? [];
  const [templateId, setTemplateId] = useState('');
  const [algorithm, setAlgorithm] = useState('auto');
  const [epochs, setEpochs] = useState('5');
  const [batch, setBatch] = useState('256');
  const [rate, setRate] = useState('0.001');
  const [selected, setSelected] = useState<string>();
  const a = useAction();
  const admin = isAdmin(session.role);
  const anyActive = jobs.rows?.some((j) => ACTIVE_JOB.has(j.status)) ?? false;
  useInterval(jobs.reload, 2000, anyActive);

  const start = () =>
    a.run(async () => {
      const tid = Number(templateId || published[0]?.id);
      const j = await api<Job>('POST', '/api/training-jobs', { template_id: tid, options: { algorithm, epochs: Number(epochs), batch_size: Number(batch), learning_rate: Number(rate) } });
      setSelected(j.job_name);
      jobs.reload();
    });

  return (
    <>
      <PageHeader title="Training runs" />
      {admin ? (
        <Card title="Start a run">
          {published.length ? (
            <Form label="Start a training run" onSubmit={start} submit="Start training" busy={a.busy}>
              <Select
                label="Template"
                value={templateId || String(published[0]?.id ?? '')}
                onChange={setTemplateId}
                options={published.map((t) => ({ value: String(t.id), label: `${t.name} (#${t.id})` }))}
              />
              <Select label="Algorithm" value={algorithm} onChange={setAlgorithm} options={['auto', 'ease', 'item_knn', 'bpr', 'popularity'].map((x) => ({ value: x, label: x }))} />
              <Field label="Epochs" type="number" min={1} max={50} value={epochs} onChange={setEpochs} />
              <Select label="Batch size" value={batch} onChange={setBatch} options={['64', '128', '256', '512'].map((x) => ({ value: x, label: x }))} />
              <Field label="Learning rate" type="number" step="any" value={rate} onChange={setRate} />
            </Form>
          ) : templates.data ? (
            <Empty>Publish a template first (Templates page).</Empty>
          ) : null}
          {/* Unread, the templates are not said to be none. */}
          <Problem error={templates.error && `The templates could not be read: ${templates.error}`} />
          <Problem error={a.error} />
        </Card>
      ) : null}
      <div className="split">
        <Card title="Runs">
          <DataTable
            label="Training runs"
            error={jobs.error}
            rows={jobs.rows}
            loading={jobs.loading}
            more={jobs.more}
            rowKey={(j) => j.job_name}
            rowClassName={(j) => (j.job_name === selected ? 'selected' : undefined)}
            empty="No runs yet."
            columns={[
              {
                header: 'Run',
                cell: (j) => (
                  <button type="button" className="link" onClick={() => setSelected(j.job_name)} aria-pressed={j.job_name === selected}>
                    {j.job_name}
                  </button>
                ),
              },
              { header: 'Status', cell: (j) => <span className={`badge ${j.status}`}>{j.status}</span> },
              { header: 'Progress', cell: (j) => `${Math.round(j.progress * 100)}%` },
              { header: 'Version', cell: (j) => (j.model_version ? `v${j.model_version}` : '–') },
              { header: 'Created', cell: (j) => when(j.created) },
            ]}
          />
        </Card>
        {selected ? <RunDetail name={selected} onChanged={jobs.reload} admin={admin} /> : null}
      </div>
    </>
  );
}
