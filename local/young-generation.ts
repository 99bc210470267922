/**
 * V8's semi-space (half of the young generation: where new objects are made, and most die) of
 * the local stack's API threads (the stand-in for the Lambdas that hold a tenant's index or
 * models) and of its database thread; `SERVING_YOUNG_GENERATION_MB`, three semi-spaces, is the
 * `resourceLimits.maxYoungGenerationSizeMb` of those workers.
 *
 * At Node's default (16 MB) the young generation filled every few requests: a request in flight at
 * a scavenge had its objects copied, at a second one moved to the old generation, whose
 * collections then came every few seconds and marked all of the index's documents (about 100 MB
 * of objects at 100K items), pausing the thread 10-70 ms; the database thread scavenged every few
 * requests too, 5-10 ms each on 2 cores. With 64 MB, the 100K catalog built, one client, 300
 * queries per length band, alternated three times with the default: p99 14.1-25.1 ms against
 * 14.9-34.0, searches over 20 ms 18 of 3,600 against 52, p50 about a tenth lower
 * (docs/benchmarks.md "The young generation"). The cost is memory: 144 MB more young generation
 * per thread at most (130-170 MB more resident with the index loaded).
 *
 * On AWS nothing is set: Lambda's Node bootstrap sizes the heap from the function's memory (a
 * young generation of a tenth of it: semi-spaces of about 150 MB at 3,008 MB), so the API threads
 * here get less than a search Lambda already has. NODE_OPTIONS must not name a heap size either:
 * depending on the runtime's bootstrap, its own flags then override it or it drops its own
 * (the old generation falling to V8's default, about a quarter of the function's memory).
 */
export const SERVING_SEMI_SPACE_MB = 64;
/** The young generation those workers get (`resourceLimits.maxYoungGenerationSizeMb`): V8's is three semi-spaces. */
export const SERVING_YOUNG_GENERATION_MB = 3 * SERVING_SEMI_SPACE_MB;
