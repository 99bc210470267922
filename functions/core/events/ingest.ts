import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { consoleStore, eventStore, exposureStore, searchLogStore } from '#shared/data/index';
import { metrics } from '#shared/observability';
import { ingestEvents } from '#shared/domain/events';
import { coreHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created } from '#shared/http/respond';
import { ingestEventsBody } from '#shared/schemas/events';

export const handler = coreHandler('core/events/ingest', { body: ingestEventsBody, idempotency }, async ({ tenant, body, idPlan }) => {
  const reply = created(await ingestEvents({ events: eventStore(), exposures: exposureStore(), searches: searchLogStore(), erasures: consoleStore() }, tenant, body, idPlan));
  metrics.addMetric('EventsIngested', MetricUnit.Count, body.length);
  return reply;
});
