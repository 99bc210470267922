import type { Catalog } from '../../shared/domain/catalog.ts';
import type { ItemWithVector } from '../../shared/domain/types.ts';

/**
 * A catalog of `docs` (ids 1 to n) whose items are all near any taste by content, the nearer the
 * lower the id (`step` apart, from 1), the first `near` of them at most; every vector adds 1 to a
 * taste. `newest`: the newest items fill up (highest ids first), else none do.
 */
export function nearestFirstCatalog(docs: Map<number, ItemWithVector>, opts: { near?: number; step?: number; newest?: boolean } = {}): Catalog {
  const { near = Number.POSITIVE_INFINITY, step = 1e-3, newest = false } = opts;
  return {
    dims: 2,
    behind: false,
    current: async (ids) => ids.map((id) => docs.get(id)),
    get: (id) => docs.get(id),
    isLive: (id) => docs.get(id)?.active === true,
    newest: (k, accept) => (newest ? [...docs.keys()].reverse().filter(accept).slice(0, k) : []),
    similarity: () => () => 0,
    hasVector: (d) => d.vector !== null,
    addVectors(items, weights, into) {
      for (const w of weights) into[0] = (into[0] as number) + w;
      return items.length > 0;
    },
    nearest(_q, k, visit) {
      for (let id = 1; id <= Math.min(docs.size, near, k + 1); id++) visit(id, 1 - (id - 1) * step);
    },
  };
}
