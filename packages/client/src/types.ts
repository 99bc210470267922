/** Named shapes taken from the generated schema (never written by hand). */
import type { components, operations } from './schema.ts';

type Schemas = components['schemas'];

/** The JSON request body of an operation (by operationId). */
export type RequestBody<O extends keyof operations> = operations[O] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The query parameters of an operation (by operationId). */
export type QueryParams<O extends keyof operations> = operations[O] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type Item = Schemas['Item'];
export type ItemList = Schemas['ItemList'];
export type ItemDeleted = Schemas['ItemDeleted'];
export type ItemCreate = Exclude<RequestBody<'createItems'>, unknown[]>;
export type ItemUpdate = RequestBody<'updateItem'>;
export type ItemListQuery = QueryParams<'listItems'>;
export type Event = Schemas['Event'];
export type EventList = Schemas['EventList'];
export type EventInput = RequestBody<'ingestEvents'>[number];
export type EventListQuery = QueryParams<'listEvents'>;
export type SearchRequest = RequestBody<'search'>;
export type SearchResults = Schemas['SearchResults'];
export type SearchHit = Schemas['SearchHit'];
export type Recommendation = Schemas['Recommendation'];
export type RecommendationList = Schemas['RecommendationList'];
/**
 * A query as a caller writes it: flags also as booleans, a context also by its numeric ID (the
 * console's `id`), both sent as their text.
 */
type Written<Q> = { [K in keyof Q]: Q[K] extends 'true' | 'false' | undefined ? Q[K] | boolean : K extends 'context_id' ? Q[K] | number : Q[K] };
export type RecommendationQuery = Written<QueryParams<'getRecommendations'>>;
export type CoreError = Schemas['CoreError'];
export type PlatformError = Schemas['PlatformError'];

export type ApiKey = Schemas['ApiKey'];
export type ApiKeyCreated = Schemas['ApiKeyCreated'];
export type Client = Schemas['Client'];
export type ClientCreated = Schemas['ClientCreated'];
export type Context = Schemas['Context'];
export type EventType = Schemas['EventType'];
export type Template = Schemas['Template'];
export type TrainingJob = Schemas['TrainingJob'];
export type TrainingJobLogs = Schemas['TrainingJobLogs'];
export type ModelVersion = Schemas['ModelVersion'];
export type ModelEndpoint = Schemas['ModelEndpoint'];
export type Rule = Schemas['Rule'];
export type Segment = Schemas['Segment'];
export type Experiment = Schemas['Experiment'];
export type RerankControls = Schemas['RerankControls'];
export type SynonymSet = Schemas['SynonymSet'];
export type ItemSearchResults = Schemas['ItemSearchResults'];
