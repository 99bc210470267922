import { Fragment, useId, useState } from 'react';
import { api, type Explain, type RecsResult, type SearchHit, type SearchResult } from '../api.ts';
import { Form } from '../table.tsx';
import { Card, Check, Empty, Field, PageHeader, Problem, Select, TabPanel, Tabs, count, num, useResult } from '../ui.tsx';
import { ContextPicker, useContexts } from './common.tsx';
import type { PageProps } from './index.tsx';

const unescapeHtml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** Highlight text as the API returns it (HTML-escaped, matches in <em>): rendered as text with <mark>, never as HTML. */
function Highlighted({ text }: { text: string }) {
  // Each part is keyed by where it starts in the text.
  let at = 0;
  const parts = text.split(/(<em>.*?<\/em>)/g).map((p) => {
    const start = at;
    at += p.length;
    return { p, start };
  });
  return <>{parts.map(({ p, start }) => (p.startsWith('<em>') ? <mark key={start}>{unescapeHtml(p.slice(4, -5))}</mark> : <Fragment key={start}>{unescapeHtml(p)}</Fragment>))}</>;
}

/** One rerank step in words: what a control added to the score, or where it moved the result. */
function rerankStep(r: Explain['rerank'][number]): string {
  const control = r.control.replace(/_/g, ' ');
  return 'added' in r ? `${control} +${num(r.added)}` : `${control}: moved from ${r.moved_from} to ${r.moved_to}`;
}

function ExplainView({ e }: { e: Explain }) {
  return (
    <details>
      <summary>Why this score</summary>
      <dl className="kv">
        <dt>Base score</dt>
        <dd>{num(e.base_score)}</dd>
        <dt>Rules</dt>
        <dd>{e.rules.length ? e.rules.map((r) => `${r.name} ×${r.boost}`).join(', ') : 'none'}</dd>
        <dt>After rules</dt>
        <dd>{num(e.score_after_rules)}</dd>
        <dt>Rerank</dt>
        <dd>{e.rerank.length ? e.rerank.map(rerankStep).join('; ') : 'none'}</dd>
        <dt>Final</dt>
        <dd>{num(e.final_score)}</dd>
      </dl>
    </details>
  );
}

export function Playground(_: PageProps) {
  const contexts = useContexts();
  const [tab, setTab] = useState<'search' | 'recs'>('search');
  const tabs = useId();
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState('hybrid');
  const [contextId, setContextId] = useState('');
  const [userId, setUserId] = useState('');
  const [itemId, setItemId] = useState('');
  const [facets, setFacets] = useState('category, brand, price');
  const [explain, setExplain] = useState(true);
  const [highlight, setHighlight] = useState(true);
  // Each tab shows its own last request: its answer, or its error alone (the answer before it is cleared).
  const search = useResult<SearchResult>();
  const recs = useResult<RecsResult>();

  const runSearch = () =>
    search.run(() => {
      const keys = facets
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      return api<SearchResult>('POST', '/console/api/search', {
        query,
        mode,
        limit: 20,
        explain,
        highlight,
        ...(keys.length ? { facets: keys } : {}),
        ...(contextId ? { context_id: contextId } : {}),
        ...(userId ? { user_id: userId } : {}),
      });
    });
  const runRecs = () =>
    recs.run(() => {
      const p = new URLSearchParams({ limit: '20', explain: String(explain) });
      if (userId) p.set('user_id', userId);
      if (itemId) p.set('item_id', itemId);
      if (contextId) p.set('context_id', contextId);
      return api<RecsResult>('GET', `/console/api/recommendations?${p}`);
    });

  const ctx = <ContextPicker value={contextId} onChange={setContextId} allowNone contexts={contexts.data?.data ?? []} error={contexts.error} />;
  return (
    <>
      <PageHeader title="Search playground">
        <Tabs
          id={tabs}
          label="Playground mode"
          tabs={[
            { value: 'search', label: 'Search' },
            { value: 'recs', label: 'Recommendations' },
          ]}
          value={tab}
          onChange={setTab}
        />
      </PageHeader>
      <p className="muted">Runs Core search and recommendations for this tenant on the server. Playground requests are not counted in experiments or search analytics.</p>
      <TabPanel id={tabs} value={tab}>
        {tab === 'search' ? (
          <Card>
            <Form label="Search playground" search onSubmit={runSearch} submit="Search" busy={search.busy}>
              <Field label="Query" value={query} onChange={setQuery} placeholder="running shoes" />
              <Select label="Mode" value={mode} onChange={setMode} options={['hybrid', 'keyword', 'semantic'].map((m) => ({ value: m, label: m }))} />
              {ctx}
              <Field label="User ID (personalise)" value={userId} onChange={setUserId} />
              <Field label="Facets" value={facets} onChange={setFacets} hint="metadata keys, comma separated" />
              <Check label="Explain" checked={explain} onChange={setExplain} />
              <Check label="Highlight" checked={highlight} onChange={setHighlight} />
            </Form>
            <Problem error={search.error} />
          </Card>
        ) : (
          <Card>
            <Form label="Recommendations playground" onSubmit={runRecs} submit="Recommend" busy={recs.busy}>
              <Field label="User ID" value={userId} onChange={setUserId} />
              <Field label="Similar to item ID" value={itemId} onChange={setItemId} />
              {ctx}
              <Check label="Explain" checked={explain} onChange={setExplain} />
            </Form>
            <Problem error={recs.error} />
          </Card>
        )}
        {tab === 'search' && search.data ? <SearchResults r={search.data} /> : null}
        {tab === 'recs' && recs.data ? <RecsResults r={recs.data} /> : null}
      </TabPanel>
    </>
  );
}

/** A result's id, category and brand (and why it was recommended) between dots: those it has, no empty gap for one it lacks. */
function ItemLine({ id, metadata, reason }: { id: string | number; metadata?: Record<string, unknown> | null; reason?: string }) {
  const category = String(metadata?.category ?? '');
  const brand = String(metadata?.brand ?? '');
  const parts = [
    <Fragment key="id">#{id}</Fragment>,
    category ? <Fragment key="category">{category}</Fragment> : null,
    brand ? (
      <span key="brand" data-testid="item-brand">
        {brand}
      </span>
    ) : null,
    reason ? <Fragment key="reason">{reason}</Fragment> : null,
  ].filter((p) => p !== null);
  return <div className="muted">{parts.flatMap((p, i) => (i ? [' · ', p] : [p]))}</div>;
}

function RecsResults({ r: recs }: { r: RecsResult }) {
  return (
    <Card title={`${count(recs.data.length, 'recommendation', 'recommendations')} · ${recs.strategy}${recs.model ? ` · ${recs.model.endpoint} v${recs.model.version}` : ''}`}>
      {recs.data.length === 0 ? (
        <Empty>Nothing to recommend.</Empty>
      ) : (
        <ol className="results" aria-label="Recommendations">
          {recs.data.map((r) => (
            <li key={r.item_id}>
              <div className="row">
                <strong>{r.item.name}</strong>
                <span className="score">score {num(r.score)}</span>
              </div>
              <ItemLine id={r.item_id} metadata={r.item.metadata} reason={r.reason} />
              {r.explain ? <ExplainView e={r.explain} /> : null}
            </li>
          ))}
        </ol>
      )}
    </Card>
  );
}

function SearchResults({ r }: { r: SearchResult }) {
  return (
    <div className="split">
      <Card title={`${count(r.total, 'match', 'matches')}${r.experiment ? ` · experiment ${r.experiment.id} variant ${r.experiment.variant}` : ''}`}>
        {r.data.length === 0 ? (
          <Empty>No results.</Empty>
        ) : (
          <ol className="results" aria-label="Search results">
            {r.data.map((h: SearchHit) => (
              <li key={h.id} data-testid="search-hit">
                <div className="row">
                  <strong>{h.highlight ? <Highlighted text={h.highlight.name} /> : h.name}</strong>
                  <span className="score">score {num(h.score)}</span>
                </div>
                <ItemLine id={h.id} metadata={h.metadata} />
                {h.highlight?.description ? (
                  <p className="snippet">
                    <Highlighted text={h.highlight.description} />
                  </p>
                ) : null}
                {h.explain ? <ExplainView e={h.explain} /> : null}
              </li>
            ))}
          </ol>
        )}
      </Card>
      {r.facets ? (
        <Card title="Facets" className="facets">
          {Object.entries(r.facets).map(([key, f]) => (
            <section key={key} aria-label={`Facet ${key}`}>
              <h3>{key}</h3>
              {f.values.length ? (
                <ul>
                  {f.values.slice(0, 8).map((v) => (
                    // Keyed by type and text: a string "true" and the boolean true are two values of one key.
                    <li key={`${typeof v.value}:${String(v.value)}`}>
                      {String(v.value)} <span className="muted">{v.count}</span>
                    </li>
                  ))}
                </ul>
              ) : null}
              {/* The first 8 are listed: the others are counted, not left unsaid (a shop's 13 categories showed as 8). */}
              {f.values.length > 8 ? (
                <p className="muted">
                  and {count(f.values.length - 8, 'other value', 'other values')}
                  {f.values_truncated ? ', and others past the 100 most frequent' : ''}
                </p>
              ) : null}
              {f.count === 0 ? <p className="muted">No match has this key.</p> : null}
              {f.min !== null ? (
                <p className="muted">
                  {f.min} – {f.max}
                </p>
              ) : null}
            </section>
          ))}
        </Card>
      ) : null}
    </div>
  );
}
