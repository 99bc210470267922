/*
 * Update and condition expressions, generated from what a write means: the attributes it sets,
 * removes and adds to, and the conditions it holds under. Every attribute name and value goes
 * through a placeholder (`#n0`, `:v0`), so no attribute name (`ttl`, `status`, `event:12`) can
 * collide with a reserved word, and no store pushes expression strings of its own.
 */

export interface Change {
  set?: Record<string, unknown>;
  /** Set only where the attribute is absent (`if_not_exists`). */
  setIfAbsent?: Record<string, unknown>;
  remove?: readonly string[];
  /** Numbers added (an absent attribute counts as 0). */
  add?: Record<string, number>;
}

/** A condition on the row a write finds, built with the placeholders of the expression it joins. */
export type Condition = (x: Expr) => string;

/** The names and values of one request's expressions. */
export class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private readonly nameOf = new Map<string, string>();
  private n = 0;

  name(attr: string): string {
    let p = this.nameOf.get(attr);
    if (p === undefined) {
      p = `#n${this.nameOf.size}`;
      this.nameOf.set(attr, p);
      this.names[p] = attr;
    }
    return p;
  }

  value(v: unknown): string {
    const p = `:v${this.n++}`;
    this.values[p] = v;
    return p;
  }

  /** A document path: `task.ref` is the `ref` field of the map `task` (each part a placeholder). */
  path(attr: string): string {
    return attr
      .split('.')
      .map((part) => this.name(part))
      .join('.');
  }

  exists = (attr: string) => `attribute_exists(${this.name(attr)})`;
  absent = (attr: string) => `attribute_not_exists(${this.name(attr)})`;
  eq = (attr: string, v: unknown) => `${this.name(attr)} = ${this.value(v)}`;
  cmp = (attr: string, op: '<' | '<=' | '>' | '>=', v: unknown) => `${this.name(attr)} ${op} ${this.value(v)}`;
  /**
   * Each field equal to its value, or absent where the value is `undefined`; `a.b` names field b
   * of map a. Values are scalars: dynalite, the local stand-in, never finds two maps or lists
   * equal (DynamoDB compares them whole), so a condition on a map names its fields instead.
   */
  fields = (expect: Record<string, unknown>) =>
    Object.entries(expect).map(([k, v]) => {
      if (v !== null && typeof v === 'object') throw new Error(`A condition compares scalars: name the fields of ${k} (${k}.field) instead of the whole ${Array.isArray(v) ? 'list' : 'map'}`);
      return v === undefined ? `attribute_not_exists(${this.path(k)})` : `${this.path(k)} = ${this.value(v)}`;
    });
  and = (...parts: string[]) => parts.join(' AND ');
  or = (...parts: string[]) => `(${parts.join(' OR ')})`;

  /** The UpdateExpression of a change (undefined when it changes nothing). */
  update(c: Change): string | undefined {
    const set = [
      ...Object.entries(c.set ?? {}).map(([k, v]) => `${this.name(k)} = ${this.value(v)}`),
      ...Object.entries(c.setIfAbsent ?? {}).map(([k, v]) => `${this.name(k)} = if_not_exists(${this.name(k)}, ${this.value(v)})`),
    ];
    const remove = (c.remove ?? []).map((k) => this.name(k));
    const add = Object.entries(c.add ?? {}).map(([k, n]) => `${this.name(k)} ${this.value(n)}`);
    const clauses = [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : '', add.length ? `ADD ${add.join(', ')}` : ''].filter(Boolean);
    return clauses.length ? clauses.join(' ') : undefined;
  }

  /** The names and values, each left out when empty (DynamoDB refuses empty maps). */
  params(): { ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> } {
    return {
      ...(this.nameOf.size ? { ExpressionAttributeNames: this.names } : {}),
      ...(this.n ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

/** Counter additions without their zeros; undefined when nothing is left to add. */
export function nonZero(counts: Record<string, number>): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  let any = false;
  for (const [k, n] of Object.entries(counts)) if (n !== 0) (out[k] = n), (any = true);
  return any ? out : undefined;
}
