import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { accepted } from '#shared/http/respond';
import { jobs } from '#shared/jobs';
import { jobView, startTraining } from '#shared/domain/console';
import { trainingJobBody } from '#shared/schemas/console';

export const handler = platformHandler('console/jobs-create', { body: trainingJobBody }, async ({ tenant, body }) => accepted(jobView(await startTraining(consoleStore(), jobs(), tenant, body))));
