import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA, type IndexName } from './table-schema.ts';

/*
 * A thin declaration of a stored entity, in the shape of ElectroDB's (an entity's attributes and
 * its indexes, each named for its access pattern, with key templates whose `${facet}`s are filled
 * from the row), generating what the stores send: keys, key conditions of queries, the prefixes
 * and bounds of ranges, and the parse of a sort key back to its facets. Update and condition
 * expressions come from expressions.ts. The entities are declared in entities.ts.
 *
 * Not ElectroDB itself, for this pass: its keys are its own format (`$service#entity_1#id_…`,
 * lower-cased, with `__edb_e__` / `__edb_v__` attributes on every row), so adopting it would
 * mean migrating every row of an existing table or overriding each template back to ours, and
 * the serving path's calls go through signed.ts (plain signed requests, a sixth of an SDK call's CPU),
 * which ElectroDB, built on the document client, would bypass: item GET, ingest and idempotency
 * would have to be measured again against that. What it offers here, one declaration per
 * entity, costs these hundred lines.
 */

export type Value = string | number;
type Row = Record<string, unknown>;

/** The facet names of a key template: `TENANT#${tenant}#ITEMS` → `tenant`. */
export type FacetsIn<S extends string> = S extends `${string}\${${infer F}}${infer R}` ? F | FacetsIn<R> : never;
export type FacetValues<S extends string> = { [K in FacetsIn<S>]: Value };

export interface KeyTemplate {
  /** A GSI, by its physical name (table-schema.ts); absent: the table's own key. */
  index?: IndexName;
  pk: string;
  sk: string;
}

/** Query input in plain values (as lib-dynamodb takes it), without the table. */
export type QueryInput = Omit<QueryCommandInput, 'TableName'>;

/** A sort-key condition; values are sort keys (or their prefixes) the index made. */
export type SkRange = { gt: string } | { lt: string } | { beginsWith: string } | { between: readonly [string, string] };

export interface IndexOps<D extends KeyTemplate> {
  /** The physical index (undefined: the table's key) and its key attributes. */
  readonly indexName: IndexName | undefined;
  readonly pkAttr: string;
  readonly skAttr: string;
  pk(f: FacetValues<D['pk']>): string;
  /** The partition key's constant start (up to its first facet). */
  pkPrefix(): string;
  sk(f: FacetValues<D['sk']>): string;
  /** The sort key up to the first facet not given: what `beginsWith` and range bounds take. */
  skPrefix(f?: Partial<FacetValues<D['sk']>>): string;
  /** The index's two key attributes of a row. */
  key(f: FacetValues<D['pk']> & FacetValues<D['sk']>): Record<string, string>;
  /** A sort key's facets, as the strings written (the last facet takes the rest). */
  parse(sk: string): Record<FacetsIn<D['sk']>, string>;
  /** A Query of one partition of the index, optionally within a sort-key range. */
  query(f: FacetValues<D['pk']>, range?: SkRange): QueryInput;
}

export interface Entity<I extends { primary: KeyTemplate } & Record<string, KeyTemplate>> {
  readonly name: string;
  readonly attributes: readonly string[];
  readonly indexes: { [K in keyof I]: IndexOps<I[K]> };
  /** The row's primary key. */
  key(f: FacetValues<I['primary']['pk']> & FacetValues<I['primary']['sk']>): { pk: string; sk: string };
  /**
   * Every key attribute of a row: its primary key, and the key of each secondary index whose
   * facets are all given (an index is sparse: a row without a facet is not in it).
   */
  keys(f: Partial<Record<FacetsIn<I[keyof I]['pk']> | FacetsIn<I[keyof I]['sk']>, Value | undefined>>): Record<string, string>;
  /** Whether a row of a shared partition is this entity's (its sort key starts with the entity's constant prefix). */
  owns(row: Row): boolean;
}

interface Part {
  literal?: string;
  facet?: string;
}

function compile(template: string): Part[] {
  const parts: Part[] = [];
  const re = /\$\{([a-z_]+)\}/g;
  let at = 0;
  for (let m = re.exec(template); m; m = re.exec(template)) {
    if (m.index > at) parts.push({ literal: template.slice(at, m.index) });
    parts.push({ facet: m[1] as string });
    at = m.index + m[0].length;
  }
  if (at < template.length) parts.push({ literal: template.slice(at) });
  return parts;
}

/** Numeric ids are zero-padded to 16 digits so that string order equals numeric order. */
export const pad = (n: number): string => n.toString().padStart(16, '0');
/** The sort-key value above every padded id. */
export const LAST_ID = '9'.repeat(16);

type Format = (v: Value) => string;
const defaultFormat: Format = (v) => (typeof v === 'number' ? pad(v) : v);

/**
 * Declares an entity. `format` overrides how a facet is written (default: numbers padded to 16
 * digits, strings as they are).
 */
export function entity<const I extends { primary: KeyTemplate } & Record<string, KeyTemplate>>(decl: {
  name: string;
  attributes: readonly string[];
  indexes: I;
  format?: Record<string, Format>;
}): Entity<I> {
  const format = (name: string): Format => decl.format?.[name] ?? defaultFormat;
  const fill = (parts: Part[], f: Record<string, Value | undefined>, partial: boolean): string | undefined => {
    let out = '';
    for (const p of parts) {
      if (p.literal !== undefined) out += p.literal;
      else {
        const v = f[p.facet as string];
        if (v === undefined) return partial ? out : undefined;
        out += format(p.facet as string)(v);
      }
    }
    return out;
  };
  const must = (s: string | undefined, what: string): string => {
    if (s === undefined) throw new Error(`${decl.name}: a facet of its ${what} is missing`);
    return s;
  };

  const indexes = {} as Record<string, IndexOps<KeyTemplate>>;
  const compiled: { pkAttr: string; skAttr: string; pk: Part[]; sk: Part[] }[] = [];
  for (const [name, t] of Object.entries(decl.indexes) as [string, KeyTemplate][]) {
    const schema = t.index ? TABLE_SCHEMA.indexes.find((i) => i.name === t.index) : undefined;
    if (t.index && !schema) throw new Error(`${decl.name}.${name}: no index ${t.index}`);
    const pkAttr = schema?.partitionKey ?? TABLE_SCHEMA.partitionKey;
    const skAttr = schema?.sortKey ?? TABLE_SCHEMA.sortKey;
    const pk = compile(t.pk);
    const sk = compile(t.sk);
    compiled.push({ pkAttr, skAttr, pk, sk });
    const ops: IndexOps<KeyTemplate> = {
      indexName: t.index,
      pkAttr,
      skAttr,
      pk: (f) => must(fill(pk, f, false), 'partition key'),
      pkPrefix: () => fill(pk, {}, true) as string,
      sk: (f) => must(fill(sk, f, false), 'sort key'),
      skPrefix: (f = {}) => fill(sk, f, true) as string,
      key: (f) => ({ [pkAttr]: must(fill(pk, f, false), 'partition key'), [skAttr]: must(fill(sk, f, false), 'sort key') }),
      parse: (s) => parseKey(sk, s),
      query: (f, range) => {
        const values: Record<string, unknown> = { ':pk': must(fill(pk, f, false), 'partition key') };
        let cond = `${pkAttr} = :pk`;
        if (range) {
          if ('gt' in range) (cond += ` AND ${skAttr} > :after`), (values[':after'] = range.gt);
          else if ('lt' in range) (cond += ` AND ${skAttr} < :before`), (values[':before'] = range.lt);
          else if ('beginsWith' in range) (cond += ` AND begins_with(${skAttr}, :prefix)`), (values[':prefix'] = range.beginsWith);
          else (cond += ` AND ${skAttr} BETWEEN :from AND :to`), (values[':from'] = range.between[0]), (values[':to'] = range.between[1]);
        }
        return { ...(t.index ? { IndexName: t.index } : {}), KeyConditionExpression: cond, ExpressionAttributeValues: values };
      },
    };
    indexes[name] = ops;
  }
  const primary = indexes.primary as IndexOps<KeyTemplate>;
  const ownPrefix = primary.skPrefix();

  return {
    name: decl.name,
    attributes: decl.attributes,
    indexes: indexes as Entity<I>['indexes'],
    key: (f) => primary.key(f) as { pk: string; sk: string },
    keys: (f) => {
      const out: Record<string, string> = {};
      for (const c of compiled) {
        const pk = fill(c.pk, f, false);
        const sk = fill(c.sk, f, false);
        if (pk !== undefined && sk !== undefined) (out[c.pkAttr] = pk), (out[c.skAttr] = sk);
      }
      return out;
    },
    owns: (row) => String(row[TABLE_SCHEMA.sortKey]).startsWith(ownPrefix),
  };
}

function parseKey(parts: Part[], s: string): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  parts.forEach((p, i) => {
    if (p.literal !== undefined) {
      at += p.literal.length;
      return;
    }
    const next = parts[i + 1]?.literal;
    const end = next === undefined ? s.length : s.indexOf(next, at);
    out[p.facet as string] = s.slice(at, end < 0 ? s.length : end);
    at = end < 0 ? s.length : end;
  });
  return out;
}

/** The first string after every one that starts with `prefix` (its last character moved on by one): the inclusive upper bound of a prefix. */
export const prefixEnd = (prefix: string): string => prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
