import * as C from '../schemas/responses/console.ts';
import * as K from '../schemas/responses/control.ts';
import * as P from '../schemas/responses/platform.ts';
import { accepted, created, NO_STORE, ok, op, type OperationDoc } from './operation.ts';

const CREDENTIALS = 'Credentials';
const ITEMS = 'Item search';
const SEARCH_ADMIN = 'Search administration';
const CONSOLE = 'Console records';
const TRAINING = 'Training';
const MODELS = 'Versions';
const CONTROL = 'Control plane';

/** The Platform API, by route key. */
export const platformOperations: Record<string, OperationDoc> = {
  'POST /api/clients': op('createClient', CREDENTIALS, 'Create an OAuth client', created(P.clientCreated, 'The client, with its secret (shown once).'), { headers: NO_STORE }),
  'GET /api/clients': op('listClients', CREDENTIALS, 'List OAuth clients', ok(P.clientList, 'A page of clients (no secrets).')),
  'DELETE /api/clients/{client_id}': op('deleteClient', CREDENTIALS, 'Delete an OAuth client (its tokens stop working at once)', ok(P.clientDeleted, 'Deleted.')),
  'POST /api/api-keys': op('createApiKey', CREDENTIALS, 'Create a Platform API key', created(P.apiKeyCreated, 'The key record, with the key (shown once).'), {
    headers: NO_STORE,
    examples: { request: { name: 'ci', environment: 'production', scopes: ['items'] } },
  }),
  'GET /api/api-keys': op('listApiKeys', CREDENTIALS, 'List Platform API keys', ok(P.apiKeyList, 'A page of keys (never the keys themselves).')),
  'DELETE /api/api-keys/{id}': op('deleteApiKey', CREDENTIALS, 'Revoke a Platform API key (at once, for good)', ok(P.apiKeyDeleted, 'Revoked.')),
  'POST /api/items/search': op('searchItems', ITEMS, 'Search items (inactive ones included)', ok(P.platformSearchResults, 'A page of matching items.'), {
    examples: { request: { query: 'shoe', filters: [{ field: 'metadata.brand', op: 'eq', value: 'Acme' }], limit: 20 } },
  }),
  'GET /api/items/search': op('searchItemsGet', ITEMS, 'Search items by query string', ok(P.platformSearchResults, 'A page of matching items.')),
  'GET /api/search-index': op('getSearchIndex', ITEMS, 'Search index status', ok(P.indexStatus, 'How many items are searchable, embedded and waiting.')),
  'POST /api/search-index/rebuild': op('rebuildSearchIndex', ITEMS, 'Build a new search index now', accepted(P.indexRebuild, 'The build is queued; poll GET /api/search-index.')),
  'POST /api/contexts': op('createContext', CONSOLE, 'Create a context', created(C.context, 'The context, with its numeric id.')),
  'GET /api/contexts': op('listContexts', CONSOLE, 'List contexts', ok(C.contextList, 'A page of contexts, by id.')),
  'GET /api/contexts/{id}': op('getContext', CONSOLE, 'Read a context', ok(C.context, 'The context.')),
  'POST /api/event-types': op('createEventType', CONSOLE, 'Create an event type', created(C.eventType, 'The event type.'), { errors: [409], examples: { request: { name: 'purchase', weight: 80 } } }),
  'GET /api/event-types': op('listEventTypes', CONSOLE, 'List event types', ok(C.eventTypeList, 'A page of event types, by id.')),
  'GET /api/event-types/{id}': op('getEventType', CONSOLE, 'Read an event type', ok(C.eventType, 'The event type.')),
  'PATCH /api/event-types/{id}': op('updateEventType', CONSOLE, "Change an event type's weight", ok(C.eventType, 'The event type.')),
  'POST /api/events/templates': op('createTemplate', TRAINING, 'Create a training template (Draft)', created(C.template, 'The template.'), {
    examples: {
      request: {
        name: 'default',
        event_types: [
          { id: 1, weight: 1 },
          { id: 2, weight: 3 },
        ],
        thresholds: { per_signal_min: 10, total_min: 100 },
      },
    },
  }),
  'GET /api/events/templates': op('listTemplates', TRAINING, 'List training templates', ok(C.templateList, 'A page of templates, by id.')),
  'GET /api/events/templates/{id}': op('getTemplate', TRAINING, 'Read a training template', ok(C.template, 'The template.')),
  'PATCH /api/events/templates/{id}': op('updateTemplate', TRAINING, 'Edit or publish a training template', ok(C.template, 'The template.'), {
    description:
      'A Draft template can be edited and published (`{"status":"Published"}`); a Published one only takes `schedule`, `auto_promote` and `status: "Published"` again, its other fields only as it holds them (a retried publish changes nothing; else 400, the Platform error naming what it still takes, also for an edit of a Draft published between its read and its write).',
    errors: [409],
  }),
  'POST /api/model-endpoints': op('createModelEndpoint', MODELS, 'Create a serving endpoint', created(C.endpoint, 'The endpoint.'), { errors: [409] }),
  'PATCH /api/model-endpoints/{id}': op('updateModelEndpoint', MODELS, 'Make an endpoint the default', ok(C.endpoint, 'The endpoint, now the default.')),
  'GET /api/model-endpoints': op('listModelEndpoints', MODELS, 'List serving endpoints', ok(C.endpointList, 'A page of endpoints, by id (exactly one of all the default).')),
  'GET /api/model-endpoints/{id}': op('getModelEndpoint', MODELS, 'Read a serving endpoint', ok(C.endpoint, 'The endpoint (`is_default` as the list shows it).')),
  'POST /api/training-jobs': op('createTrainingJob', TRAINING, 'Start a training run from a Published template', accepted(C.job, 'The run, Queued.'), {
    errors: [404],
    examples: { request: { template_id: 1, options: { algorithm: 'ease', epochs: 5 } } },
  }),
  'GET /api/training-jobs': op('listTrainingJobs', TRAINING, 'List training runs, newest first', ok(C.jobList, 'A page of runs, newest first.')),
  'GET /api/training-jobs/{jobName}': op('getTrainingJob', TRAINING, 'Read a training run', ok(C.job, 'The run.')),
  'POST /api/training-jobs/{jobName}/stop': op('stopTrainingJob', TRAINING, 'Stop a training run', ok(C.job, 'The run, Stopped or Stopping.')),
  'GET /api/training-jobs/logs/{jobName}': op('getTrainingJobLogs', TRAINING, "A training run's log", ok(C.jobLogs, 'A page of log lines.')),
  'GET /api/models': op('listModels', MODELS, 'List trained versions, newest first', ok(C.modelList, 'A page of versions, newest first.')),
  'GET /api/models/compare': op('compareModels', MODELS, 'Compare 2 to 10 versions', ok(C.modelComparison, 'The versions, and their metrics and validation figures side by side.'), { errors: [404] }),
  'GET /api/models/{version}': op('getModel', MODELS, 'Read a trained version', ok(C.modelVersion, 'The version.')),
  'PATCH /api/models/{version}': op('updateModel', MODELS, 'Label or describe a version', ok(C.modelVersion, 'The version.')),
  'POST /api/models/{version}/approve': op('approveModel', MODELS, 'Approve a version', ok(C.modelVersion, 'The version, Approved.')),
  'POST /api/models/{version}/promote': op('promoteModel', MODELS, 'Serve an approved version at an endpoint', ok(C.modelVersion, 'The version.'), {
    description:
      "Written to the endpoint's audit trail (`resource=model-endpoints/<id>`) with the change; 409 when other promotions kept changing the endpoint between this one's read and its write on each of 8 tries (`Endpoint main kept changing meanwhile; retry.`; code `changed_meanwhile`, as a rule's change that keeps racing): retry.",
    errors: [409],
    examples: { request: { endpoint_name: 'main' } },
  }),
  'DELETE /api/users/{user_id}': op('eraseUser', CONSOLE, 'Erase every event of a user', ok(C.erasure, 'How many events were deleted.')),
  'POST /api/rules': op('createRule', CONTROL, 'Create a rule', created(K.rule, 'The rule.'), {
    errors: [404],
    examples: { request: { name: 'no Bolt', context_id: 1, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Bolt' }], boost: 0 } },
  }),
  'GET /api/rules': op('listRules', CONTROL, "List rules (optionally one context's)", ok(K.ruleList, 'A page of rules.'), { errors: [404] }),
  'GET /api/rules/{id}': op('getRule', CONTROL, 'Read a rule', ok(K.rule, 'The rule.')),
  'PATCH /api/rules/{id}': op('updateRule', CONTROL, 'Change a rule', ok(K.rule, 'The rule.'), { errors: [409] }),
  'DELETE /api/rules/{id}': op('deleteRule', CONTROL, 'Delete a rule', ok(P.recordDeleted, 'Deleted.'), { errors: [409] }),
  'POST /api/segments': op('createSegment', CONTROL, 'Create a segment', created(K.segment, 'The segment.'), {
    examples: { request: { name: 'buyers', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } } },
  }),
  'GET /api/segments': op('listSegments', CONTROL, 'List segments', ok(K.segmentList, 'A page of segments.')),
  'GET /api/segments/{id}': op('getSegment', CONTROL, 'Read a segment', ok(K.segment, 'The segment.')),
  'PATCH /api/segments/{id}': op('updateSegment', CONTROL, 'Change a segment', ok(K.segment, 'The segment.'), { errors: [409] }),
  'DELETE /api/segments/{id}': op('deleteSegment', CONTROL, 'Delete a segment nothing names', ok(P.recordDeleted, 'Deleted.'), { errors: [409] }),
  'POST /api/experiments': op('createExperiment', CONTROL, 'Create an experiment (Draft)', created(K.experiment, 'The experiment.'), {
    errors: [404],
    examples: {
      request: {
        name: 'v1 vs v2',
        context_id: 1,
        variants: [
          { name: 'v1', endpoint_name: 'main', traffic_percent: 50 },
          { name: 'v2', endpoint_name: 'next', traffic_percent: 50 },
        ],
      },
    },
  }),
  'GET /api/experiments': op('listExperiments', CONTROL, 'List experiments with their results', ok(K.experimentList, 'A page of experiments.'), { errors: [404] }),
  'GET /api/experiments/{id}': op('getExperiment', CONTROL, 'Read an experiment and its results per variant', ok(K.experimentWithResults, 'The experiment and its results.')),
  'PATCH /api/experiments/{id}': op('updateExperiment', CONTROL, 'Rename, edit, start or stop an experiment', ok(K.experiment, 'The experiment.'), {
    description: "Status moves Draft → Running → Stopped; starting needs the variants' endpoints and no other Running experiment in the context (else 409).",
    errors: [409],
  }),
  'GET /api/rerank-controls': op('getRerankControls', CONTROL, "Read a context's rerank controls", ok(K.rerankControls, 'The controls.'), { errors: [404] }),
  'PUT /api/rerank-controls': op('putRerankControls', CONTROL, "Replace a context's rerank controls", ok(K.rerankControls, 'The controls.'), {
    errors: [404, 409],
    examples: { request: { diversity: 0.2, max_per_category: 2 } },
  }),
  'GET /api/audit': op('listAudit', CONTROL, "A control-plane resource's change history, newest first", ok(K.auditList, 'A page of audit entries.')),
  'POST /api/synonyms': op('createSynonymSet', SEARCH_ADMIN, 'Create a synonym set', created(P.synonymSet, 'The set.'), {
    examples: { request: { synonyms: ['sneaker', 'trainer', 'running shoe'] } },
  }),
  'GET /api/synonyms': op('listSynonymSets', SEARCH_ADMIN, 'List synonym sets', ok(P.synonymList, 'A page of sets.')),
  'GET /api/synonyms/{id}': op('getSynonymSet', SEARCH_ADMIN, 'Read a synonym set', ok(P.synonymSet, 'The set.')),
  'PATCH /api/synonyms/{id}': op('updateSynonymSet', SEARCH_ADMIN, 'Change a synonym set', ok(P.synonymSet, 'The set.'), { errors: [409] }),
  'DELETE /api/synonyms/{id}': op('deleteSynonymSet', SEARCH_ADMIN, 'Delete a synonym set', ok(P.recordDeleted, 'Deleted.'), { errors: [409] }),
  'GET /api/analytics/searches': op('getSearchAnalytics', SEARCH_ADMIN, 'Search analytics', ok(P.searchAnalytics, 'Totals, top queries and queries without results.')),
};
