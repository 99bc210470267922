import { CATEGORIES, type CategorySpec, type ProductSpec } from './vocabulary.ts';

export type Random = () => number;

/** One demo item, as `POST /v1/items` takes it. */
export interface DemoItem {
  name: string;
  description: string;
  metadata: { category: string; brand: string; price: number; currency: 'EUR'; availability: 'in_stock' | 'backorder' };
}

/** An item as the shoppers see it: its category and brand, and how popular it is in its category. */
export interface CatalogEntry {
  index: number;
  category: string;
  brand: string;
  price: number;
  /** Relative popularity within its category (a few bestsellers, a long tail). */
  popularity: number;
}

export const pick = <T>(rand: Random, list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;

/** Picks by weight (the weights need not sum to 1; `k` is the element's index). */
export function weighted<T>(rand: Random, list: readonly T[], weight: (t: T, k: number) => number): T {
  let total = 0;
  list.forEach((t, k) => (total += weight(t, k)));
  let r = rand() * total;
  for (let k = 0; k < list.length; k++) {
    r -= weight(list[k] as T, k);
    if (r < 0) return list[k] as T;
  }
  return list[list.length - 1] as T;
}

/** The list in a random order (Fisher-Yates). */
export function shuffled<T>(rand: Random, list: readonly T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** A price in cents within the product's range (in euros): 24,90 € or 129,00 €, more often cheap than dear. */
function priceIn(rand: Random, [min, max]: readonly [number, number]): number {
  const euros = min + (max - min) * rand() ** 1.5;
  return euros < 100 ? Math.max(1, Math.round(euros)) * 100 - 10 : Math.round(euros / 10) * 1000 - 100;
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function describe(rand: Random, spec: CategorySpec, product: ProductSpec, brand: string): string {
  const [first, second] = shuffled(rand, product.features);
  return `${capitalised(product.name.toLowerCase())} by ${brand} with ${first} and ${second}. Made for ${pick(rand, spec.uses)}.`;
}

/**
 * `count` items spread evenly over the categories, in category order within each round so that
 * item ids interleave categories. Names are unique: another model name is drawn for a repeated
 * one, and failing that it gets a number.
 */
export function generateCatalog(rand: Random, count: number): { items: DemoItem[]; entries: CatalogEntry[] } {
  const items: DemoItem[] = [];
  const entries: CatalogEntry[] = [];
  const names = new Set<string>();
  for (let i = 0; i < count; i++) {
    const spec = CATEGORIES[i % CATEGORIES.length] as CategorySpec;
    const brand = pick(rand, spec.brands);
    const product = pick(rand, spec.products);
    let name = `${brand} ${pick(rand, spec.variants)} ${product.name}`;
    for (let tries = 0; names.has(name) && tries < 8; tries++) name = `${brand} ${pick(rand, spec.variants)} ${product.name}`;
    for (let n = 2; names.has(name); n++) name = `${name.replace(/ \d+$/, '')} ${n}`;
    names.add(name);
    const price = priceIn(rand, product.price);
    items.push({
      name,
      description: describe(rand, spec, product, brand),
      metadata: { category: spec.category, brand, price, currency: 'EUR', availability: rand() < 0.92 ? 'in_stock' : 'backorder' },
    });
    entries.push({ index: i, category: spec.category, brand, price, popularity: 0 });
  }
  // Popularity within a category: a random rank r gets 1 / (r + 1)^0.9 (Zipf-like).
  for (const spec of CATEGORIES) {
    const members = shuffled(
      rand,
      entries.filter((e) => e.category === spec.category),
    );
    members.forEach((e, rank) => (e.popularity = 1 / (rank + 1) ** 0.9));
  }
  return { items, entries };
}
