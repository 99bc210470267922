import type { z } from 'zod/mini';
import { expect, it } from 'vitest';
import type { Endpoint } from '../../shared/domain/endpoints.ts';
import type { compareModels, modelResource } from '../../shared/domain/model-versions.ts';
import type { templateView } from '../../shared/domain/templates.ts';
import type { trainingRunView } from '../../shared/domain/training-runs.ts';
import type * as Control from '../../shared/control/records.ts';
import type { EventResource, ItemResource, ListEnvelope } from '../../shared/domain/present.ts';
import type { recommend } from '../../shared/recs/serve.ts';
import type { runSearch } from '../../shared/search/service.ts';
import type { indexStatus } from '../../shared/search/status.ts';
import type * as C from '../../shared/schemas/responses/console.ts';
import type * as K from '../../shared/schemas/responses/control.ts';
import type * as P from '../../shared/schemas/responses/platform.ts';
import type * as R from '../../shared/schemas/responses/core.ts';
import type * as S from '../../shared/schemas/responses/session.ts';
import type { sessionView } from '../../shared/console-auth/session.ts';
import type { SynonymSet } from '../../shared/search/synonyms.ts';

/*
 * Compile-time: what the domain answers is assignable to the response schema the OpenAPI document
 * declares for it (tsc checks this file): a field the schema requires that an answer lacks, or
 * holds in another type, fails the type check. (A field an answer adds beyond its schema is the
 * contract test's to find: the schemas are strict objects.)
 */
type Answers<Schema extends z.ZodMiniType, Value extends z.output<Schema>> = Value;
type Of<F extends (...a: never[]) => unknown> = Awaited<ReturnType<F>>;

export type Checks = [
  Answers<typeof R.item, ItemResource>,
  Answers<typeof R.event, EventResource>,
  Answers<typeof R.itemList, ListEnvelope<ItemResource> & { url: '/v1/items' }>,
  Answers<typeof R.recommendationList, Of<typeof recommend>>,
  Answers<typeof R.searchHit, Of<typeof runSearch>['data'][number]>,
  Answers<typeof P.indexStatus, Of<typeof indexStatus>>,
  Answers<typeof P.synonymSet, SynonymSet>,
  Answers<typeof C.template, ReturnType<typeof templateView>>,
  Answers<typeof C.job, ReturnType<typeof trainingRunView>>,
  Answers<typeof C.endpoint, Endpoint>,
  Answers<typeof C.modelVersion, Of<typeof modelResource>>,
  Answers<typeof C.modelComparison, Of<typeof compareModels>>,
  Answers<typeof K.rule, Of<typeof Control.getRule>>,
  Answers<typeof K.segment, Of<typeof Control.getSegment>>,
  Answers<typeof K.experiment, Of<typeof Control.updateExperiment>>,
  Answers<typeof K.rerankControls, Of<typeof Control.getRerank>>,
  Answers<typeof S.consoleSession, ReturnType<typeof sessionView>>,
];

it('type-checks (see tsc)', () => {
  expect(true).toBe(true);
});
