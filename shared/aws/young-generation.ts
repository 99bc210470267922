/**
 * V8's semi-space (half of the young generation: where new objects are made, and most die) in
 * the functions that hold a tenant's search index or models, and in the local stack's API and
 * database threads: `--max-semi-space-size` of those Lambdas, `resourceLimits.maxYoungGenerationSizeMb`
 * (three semi-spaces) of the local threads.
 *
 * At Node's default (16 MB) the young generation filled every few requests: a request in flight at
 * a scavenge had its objects copied, at a second one moved to the old generation, whose
 * collections then came every few seconds and marked all of the index's documents (about 100 MB
 * of objects at 100K items), pausing the thread 10-70 ms; the database stand-in's thread
 * scavenged every few requests too, 5-10 ms each on these 2 cores. With 64 MB, the 100K catalog
 * built, one client, 300 queries per length band, alternated three times with the default: p99
 * 14.1-25.1 ms against 14.9-34.0, searches over 20 ms 18 of 3,600 against 52, p50 about a tenth
 * lower (docs/benchmarks.md "The young generation"). The cost is memory: up to 192 MB more per
 * thread or function (here 130-170 MB more resident), out of a 3,008 MB function.
 */
export const SERVING_SEMI_SPACE_MB = 64;
