import { useState } from 'react';
import { api, type Comparison, type Endpoint, type ModelVersion, type Page } from '../api.ts';
import { GroupedBars } from '../charts.tsx';
import { Card, Empty, PageHeader, Problem, Select, num, useAction, useLoad, when } from '../ui.tsx';
import { isAdmin } from './common.tsx';
import type { PageProps } from './index.tsx';

const SHOWN = ['ndcg_at_10', 'precision_at_10', 'recall_at_10', 'map_at_10', 'coverage'];

function Promote({ m, endpoints, onDone }: { m: ModelVersion; endpoints: Endpoint[]; onDone: () => void }) {
  const [endpoint, setEndpoint] = useState(endpoints.find((e) => e.is_default)?.endpoint_name ?? endpoints[0]?.endpoint_name ?? '');
  const a = useAction();
  if (!endpoints.length) return <span className="muted">Create a serving endpoint to promote to.</span>;
  return (
    <form
      className="inline compact"
      aria-label={`Promote version ${m.version}`}
      onSubmit={(e) => {
        e.preventDefault();
        void a.run(async () => {
          await api('POST', `/api/models/${m.version}/promote`, { endpoint_name: endpoint });
          onDone();
        });
      }}
    >
      <Select label={`Endpoint for v${m.version}`} value={endpoint} onChange={setEndpoint} options={endpoints.map((e) => ({ value: e.endpoint_name, label: e.endpoint_name }))} />
      <button type="submit" disabled={a.busy}>
        Promote v{m.version}
      </button>
      <Problem error={a.error} />
    </form>
  );
}

export function Models({ session }: PageProps) {
  const models = useLoad(() => api<Page<ModelVersion>>('GET', '/api/models'), []);
  const endpoints = useLoad(() => api<Page<Endpoint>>('GET', '/api/model-endpoints'), []);
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
        <button type="button" className="primary" disabled={picked.length < 2 || a.busy} onClick={() => void compare()}>
          Compare {picked.length >= 2 ? `${picked.length} versions` : '(pick 2 or more)'}
        </button>
      </PageHeader>
      <Problem error={models.error ?? a.error} />
      <Card title="Versions">
        {models.data?.data.length ? (
          <div className="table-wrap">
            <table aria-label="Model versions">
              <thead>
                <tr>
                  <th scope="col">Compare</th>
                  <th scope="col">Version</th>
                  <th scope="col">Algorithm</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    nDCG@10
                  </th>
                  <th scope="col" className="num">
                    Recall@10
                  </th>
                  <th scope="col" className="num">
                    Coverage
                  </th>
                  <th scope="col">Serving on</th>
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {models.data.data.map((m) => (
                  <tr key={m.version}>
                    <td>
                      <input type="checkbox" aria-label={`Compare version ${m.version}`} checked={picked.includes(m.version)} onChange={(e) => toggle(m.version, e.target.checked)} />
                    </td>
                    <td>
                      v{m.version}
                      {m.label ? <span className="muted"> · {m.label}</span> : null}
                    </td>
                    <td>{m.algorithm}</td>
                    <td>
                      <span className={`badge ${m.status}`} data-testid={`model-status-${m.version}`}>
                        {m.status}
                      </span>
                    </td>
                    <td className="num">{num(m.metrics.ndcg_at_10)}</td>
                    <td className="num">{num(m.metrics.recall_at_10)}</td>
                    <td className="num">{num(m.metrics.coverage)}</td>
                    <td data-testid={`model-endpoints-${m.version}`}>{m.endpoints.join(', ') || '–'}</td>
                    <td>{when(m.created)}</td>
                    <td>
                      {admin && m.status === 'Trained' ? (
                        <ApproveButton version={m.version} onDone={reload} />
                      ) : admin && m.status === 'Approved' ? (
                        <Promote m={m} endpoints={endpoints.data?.data ?? []} onDone={reload} />
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <Empty>No versions yet: start a training run.</Empty>
        )}
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
      <button
        type="button"
        disabled={a.busy}
        onClick={() =>
          void a.run(async () => {
            await api('POST', `/api/models/${version}/approve`);
            onDone();
          })
        }
      >
        Approve v{version}
      </button>
      <Problem error={a.error} />
    </>
  );
}
