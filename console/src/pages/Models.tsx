import { useState } from 'react';
import { api, listAll, listPage, type Comparison, type Endpoint, type ModelVersion } from '../api.ts';
import { GroupedBars } from '../charts.tsx';
import { DataTable, Form, type Column } from '../table.tsx';
import { BusyButton, Card, PageHeader, Problem, Select, num, useAction, useLoad, usePages, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

/** The metrics the versions table shows: header and key. */
const METRICS = [
  ['nDCG@10', 'ndcg_at_10'],
  ['Recall@10', 'recall_at_10'],
  ['Coverage', 'coverage'],
] as const;
const SHOWN = ['ndcg_at_10', 'precision_at_10', 'recall_at_10', 'map_at_10', 'coverage'];

function Promote({ m, endpoints, onDone }: { m: ModelVersion; endpoints: Endpoint[]; onDone: () => void }) {
  // The choice made here, else the default endpoint (the list may arrive after this row is drawn).
  const [chosen, setEndpoint] = useState('');
  const endpoint = chosen || (endpoints.find((e) => e.is_default)?.endpoint_name ?? endpoints[0]?.endpoint_name ?? '');
  const a = useAction();
  if (!endpoints.length) return <span className="muted">Create a serving endpoint to promote to.</span>;
  return (
    <Form
      label={`Promote version ${m.version}`}
      className="inline compact"
      plain
      busy={a.busy}
      submit={`Promote v${m.version}`}
      error={a.error}
      onSubmit={() =>
        a.run(async () => {
          await api('POST', `/api/models/${m.version}/promote`, { endpoint_name: endpoint });
          onDone();
        })
      }
    >
      <Select label={`Endpoint for v${m.version}`} value={endpoint} onChange={setEndpoint} options={endpoints.map((e) => ({ value: e.endpoint_name, label: e.endpoint_name }))} />
    </Form>
  );
}

export function Models({ session }: PageProps) {
  const models = usePages((after) => listPage<ModelVersion>('/api/models', after), []);
  const endpoints = useLoad(() => listAll<Endpoint>('/api/model-endpoints'), []);
  const [picked, setPicked] = useState<number[]>([]);
  const [comparison, setComparison] = useState<Comparison>();
  const a = useAction();
  const admin = isAdmin(session.role);
  const reload = () => {
    models.reload();
    endpoints.reload();
  };
  const toggle = (v: number, on: boolean) => setPicked((p) => (on ? [...p, v].slice(-10) : p.filter((x) => x !== v)));
  const compare = () => a.run(async () => setComparison(await api<Comparison>('GET', `/api/models/compare?versions=${[...picked].sort((x, y) => x - y).join(',')}`)));

  const metrics = comparison?.metrics.filter((m) => SHOWN.includes(m.name)) ?? [];
  return (
    <>
      <PageHeader title="Model versions">
        <BusyButton className="primary" disabled={picked.length < 2} busy={a.busy} onClick={compare}>
          Compare {picked.length >= 2 ? `${picked.length} versions` : '(pick 2 or more)'}
        </BusyButton>
      </PageHeader>
      <Problem error={a.error} />
      <Card title="Versions">
        <DataTable
          label="Model versions"
          rows={models.rows}
          error={models.error}
          loading={models.loading}
          more={models.more}
          rowKey={(m) => m.version}
          // A viewer, who cannot start one, is told who does (until 2026-12-08 it was told to start one).
          empty={admin ? 'No versions yet: start a training run.' : 'No versions yet: an admin starts a training run.'}
          columns={[
            {
              header: 'Compare',
              cell: (m) => <input type="checkbox" aria-label={`Compare version ${m.version}`} checked={picked.includes(m.version)} onChange={(e) => toggle(m.version, e.target.checked)} />,
            },
            {
              header: 'Version',
              cell: (m) => (
                <>
                  v{m.version}
                  {m.label ? <span className="muted"> · {m.label}</span> : null}
                </>
              ),
            },
            { header: 'Algorithm', cell: (m) => m.algorithm },
            {
              header: 'Status',
              cell: (m) => (
                <span className={`badge ${m.status}`} data-testid={`model-status-${m.version}`}>
                  {m.status}
                </span>
              ),
            },
            ...METRICS.map(([header, key]): Column<ModelVersion> => ({ header, className: 'num', cell: (m) => num(m.metrics[key]) })),
            { header: 'Serving on', cell: (m) => m.endpoints.join(', ') || '–', testId: (m) => `model-endpoints-${m.version}` },
            { header: 'Created', cell: (m) => when(m.created) },
            {
              header: 'Actions',
              cell: (m) =>
                admin && m.status === 'Trained' ? (
                  <ApproveButton version={m.version} onDone={reload} />
                ) : admin && m.status === 'Approved' ? (
                  <Promote m={m} endpoints={endpoints.data?.data ?? []} onDone={reload} />
                ) : null,
            },
          ]}
        />
      </Card>
      {comparison ? (
        <Card title={`Comparing ${comparison.versions.map((v) => `v${v}`).join(', ')}`}>
          <GroupedBars title="Holdout metrics by version (each metric scaled to its best)" keys={comparison.versions.map(String)} groups={metrics.map((m) => ({ name: m.name, values: m.values }))} />
          <table aria-label="Metrics compared">
            <thead>
              <tr>
                <th scope="col">Metric</th>
                {comparison.versions.map((v) => (
                  <th scope="col" key={v} className="num">
                    v{v}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {comparison.metrics.map((m) => (
                <tr key={m.name}>
                  <th scope="row">{m.name}</th>
                  {comparison.versions.map((v) => (
                    <td key={v} className={`num ${m.best?.includes(v) ? 'best' : ''}`}>
                      {num(m.values[String(v)] ?? null)}
                      {m.best?.includes(v) ? <span className="sr-only"> (best)</span> : null}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </Card>
      ) : null}
    </>
  );
}

function ApproveButton({ version, onDone }: { version: number; onDone: () => void }) {
  const a = useAction();
  return (
    <>
      <BusyButton
        busy={a.busy}
        onClick={() =>
          a.run(async () => {
            await api('POST', `/api/models/${version}/approve`);
            onDone();
          })
        }
      >
        Approve v{version}
      </BusyButton>
      <Problem error={a.error} />
    </>
  );
}
