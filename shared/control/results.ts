/**
 * An experiment's results per variant, from its running totals: requests served, distinct users,
 * and per event type the events attributed (by `request_id`), the rate per request and per user,
 * and the relative lift of the per-user conversion rate over the first variant with its 95 %
 * interval; plus a sample-ratio-mismatch check of users against the configured split.
 */
import { countOf } from '../counts.ts';
import type { ExposureStore, VariantTotals } from './exposures.ts';
import { sampleRatioMismatch, twoProportionLift } from './stats.ts';
import type { Experiment } from './types.ts';

const rate = (n: number, d: number) => (d > 0 ? Number((n / d).toFixed(6)) : null);
const round = (x: number | null) => (x === null ? null : Number(x.toFixed(6)));
const roundPair = (p: [number, number] | null) => (p === null ? null : ([round(p[0]), round(p[1])] as [number | null, number | null]));
/**
 * An arm of the lift: users with the event out of the variant's users. The two are counted by
 * separate writes, so they can disagree: a user whose membership row was written but whose count
 * in `users` was not (the serving request cut off, or the totals' write failing, in between; their
 * later requests find the row and count them no more) still converts. Such a user counts as one of
 * the variant's users here, rather than the lift refusing the counts (a 500 for the whole list).
 */
const arm = (successes: number, trials: number) => ({ successes, trials: Math.max(trials, successes) });

export async function experimentResults(store: ExposureStore, tenant: string, exp: Experiment) {
  const totals = await store.totals(tenant, exp.id);
  const empty: VariantTotals = { requests: 0, users: 0, events: {}, requestsWith: {}, usersWith: {} };
  const per = exp.variants.map((_, k) => totals.get(k) ?? empty);
  const types = [...new Set(per.flatMap((t) => Object.keys(t.events)))].sort();
  const control = per[0] ?? empty;
  const variants = exp.variants.map((v, k) => {
    const t = per[k] ?? empty;
    const events = Object.fromEntries(
      types.map((type) => {
        const users = countOf(t.usersWith, type);
        const lift = k === 0 ? null : twoProportionLift(arm(countOf(control.usersWith, type), control.users), arm(users, t.users));
        return [
          type,
          {
            events: countOf(t.events, type),
            events_per_request: rate(countOf(t.events, type), t.requests),
            requests_with_event: countOf(t.requestsWith, type),
            rate_per_request: rate(countOf(t.requestsWith, type), t.requests),
            users_with_event: users,
            rate_per_user: rate(users, t.users),
            lift: lift && { relative: round(lift.relative_lift), ci_95: roundPair(lift.relative_lift_ci), difference: round(lift.difference), difference_ci_95: roundPair(lift.difference_ci) },
          },
        ];
      }),
    );
    return { name: v.name, endpoint_name: v.endpoint_name, traffic_percent: v.traffic_percent, requests: t.requests, users: t.users, events };
  });
  const srm = sampleRatioMismatch(
    per.map((t) => t.users),
    exp.variants.map((v) => v.traffic_percent),
  );
  return {
    variants,
    sample_ratio_mismatch: srm && { statistic: round(srm.statistic), p_value: round(srm.p_value), mismatch: srm.mismatch },
    attribution_window_seconds: exp.attribution_window_seconds,
  };
}
