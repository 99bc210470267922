import type { ReactNode } from 'react';
import { ACTIVE_JOB, api, listAll, type IndexStatus, type Job, type ModelVersion, type Overview as OverviewData, type Page } from '../api.ts';
import { BarChart } from '../charts.tsx';
import { Card, Loading, PageHeader, Problem, useLoad, when } from '../ui.tsx';
import type { PageProps } from './index.tsx';

/** A tile's figure: "…" while it loads, "—" (read out "not read") when it could not be read, the reason said beside it. */
function figure<T>(l: { data: T | undefined; error: string | undefined }, show: (d: T) => string | number): ReactNode {
  if (l.data !== undefined) return show(l.data);
  if (!l.error) return '…';
  return (
    <>
      <span aria-hidden="true">—</span>
      <span className="sr-only">not read</span>
    </>
  );
}

export function Overview(_: PageProps) {
  const index = useLoad(() => api<IndexStatus>('GET', '/api/search-index'), []);
  const overview = useLoad(() => api<OverviewData>('GET', '/console/api/overview?days=14'), []);
  // The runs not ended (queued, running or stopping, as the Training page counts them), by the
  // list's status filter: a page each, where every run of the tenant was read page after page (a
  // run in progress can be older than the newest page's). Until 2026-12-05 Stopping runs were left out.
  const inProgress = useLoad(async () => {
    const lists = await Promise.all([...ACTIVE_JOB].map((status) => listAll<Job>('/api/training-jobs', { status })));
    return lists.reduce((n, l) => n + l.data.length, 0);
  }, []);
  const models = useLoad(() => api<Page<ModelVersion>>('GET', '/api/models?limit=100'), []);
  const i = index.data;
  const total = overview.data?.events_per_day.reduce((n, d) => n + d.count, 0) ?? 0;
  // Events kept from before the counts (an earlier version's data): counted in full from a day within the period on.
  const from = overview.data?.counted_from;
  const countedFrom = from && from > (overview.data?.events_per_day[0]?.day ?? '') ? from : undefined;
  return (
    <>
      <PageHeader title="Overview" />
      <div className="tiles">
        <Card title="Catalog size">
          <p className="big" data-testid="catalog-size">
            {figure(index, (d) => d.items.toLocaleString())}
          </p>
          {/* The index status's count holds inactive items too, which Core search leaves out. */}
          <p className="muted">{index.error ? 'Not read: see Index status.' : 'items, inactive ones included'}</p>
        </Card>
        <Card title="Index status">
          {i ? (
            <dl className="kv">
              <dt>Embedded</dt>
              <dd>{i.embedded.toLocaleString()}</dd>
              <dt>Waiting</dt>
              <dd>{i.pending.toLocaleString()}</dd>
              <dt>Index built</dt>
              <dd>{when(i.index_built_at)}</dd>
              <dt>Changes since build</dt>
              <dd>{i.changes_since_build.toLocaleString()}</dd>
            </dl>
          ) : (
            <Loading show={index.loading} />
          )}
          <Problem error={index.error} />
        </Card>
        <Card title="Events, last 14 days">
          <p className="big" data-testid="events-total">
            {figure(overview, () => total.toLocaleString())}
          </p>
          <p className="muted">{overview.error ? 'Not read: see Events per day.' : countedFrom ? `events ingested; counted in full from ${countedFrom}` : 'events ingested'}</p>
        </Card>
        <Card title="Models">
          {/* The newest page of 100 versions (the list's default page is 20): past it, "100+". */}
          <p className="big" data-testid="model-versions">
            {figure(models, (d) => `${d.data.length}${d.has_more ? '+' : ''}`)}
          </p>
          <p className="muted">versions; {figure(inProgress, (n) => n)} runs in progress</p>
          <Problem error={models.error && `Versions: ${models.error}`} />
          <Problem error={inProgress.error && `Runs: ${inProgress.error}`} />
        </Card>
      </div>
      <Card title="Events per day">
        <Problem error={overview.error} />
        {overview.data ? <BarChart title="Events ingested per UTC day" data={overview.data.events_per_day.map((d) => ({ label: d.day, value: d.count }))} /> : <Loading show={overview.loading} />}
      </Card>
    </>
  );
}
