/**
 * The one serving pipeline of recommendations and search, in its stages:
 *
 *   candidates → score → rules → rerank → experiment → present
 *
 * The caller finds the candidates and their base scores (search: relevance ranking,
 * shared/search/rank.ts; recommendations: model and content scores, shared/recs/serve.ts). With
 * a context's plan (shared/control/serving.ts), its rules and rerank controls order them
 * (shared/control/pipeline.ts) and its experiment's variant is named in every explanation;
 * without one they are served as scored. `presentScore` and `presentExplanation` make what the
 * answer shows of each.
 */
import { presentExplain, runPipeline, withinCategoryCap, type Candidate, type Explanation, type PipelineHelpers } from '../control/pipeline.ts';
import type { ServingPlan } from '../control/serving.ts';

export type { Candidate, Explanation, PipelineHelpers } from '../control/pipeline.ts';

/** A candidate in the order served, with why it is there when a plan ordered it. */
export interface Ordered extends Candidate {
  explain?: Explanation;
}

/** The experiment of an answer: the plan's variant, when the plan assigned one. */
export type ServedExperiment = Explanation['experiment'];

/** The experiment and variant a plan's assignment names (null without one). */
export function experimentOf(assignment: ServingPlan['assignment'] | undefined): ServedExperiment {
  return assignment ? { id: assignment.experiment.id, variant: assignment.variant } : null;
}

/** Rules, then rerank controls, with a plan; the candidates as scored without one. */
export function order(candidates: readonly Candidate[], plan: ServingPlan | undefined, helpers: PipelineHelpers, experiment: ServedExperiment): readonly Ordered[] {
  return plan ? runPipeline(candidates, plan.rules, plan.controls, helpers, experiment) : candidates;
}

/**
 * Candidates below all of a plan's pool (`before`, as `order` served it), served after it: the
 * plan's rules apply (boosts, and boost 0 excludes), as do `exclude_seen` and `max_per_category`
 * (counting on from the pool); diversity, popularity and freshness order the pool only. Without a
 * plan, as scored.
 */
export function orderAfter(before: readonly Ordered[], candidates: readonly Candidate[], plan: ServingPlan | undefined, helpers: PipelineHelpers, experiment: ServedExperiment): readonly Ordered[] {
  if (!plan) return candidates;
  const { exclude_seen, max_per_category } = plan.controls;
  const after = runPipeline(candidates, plan.rules, { exclude_seen }, helpers, experiment);
  return max_per_category === undefined ? after : withinCategoryCap(after, max_per_category, before);
}

/** A score as answers show it: 6 decimals. */
export const presentScore = (score: number): number => Number(score.toFixed(6));

/** Why a served item is where it is, as answers show it (an item no plan ordered: its score, unchanged). */
export function presentExplanation(o: { score: number; explain?: Explanation | undefined }, experiment: ServedExperiment): Explanation {
  return presentExplain(o.explain ?? { base_score: o.score, rules: [], score_after_rules: o.score, rerank: [], final_score: o.score, experiment });
}
