import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { POWERTOOLS_VERSION } from '../../lib/service-function.ts';
import { ACCESS_LOG_DAYS, ARTIFACT_NONCURRENT_DAYS } from '../../lib/data.ts';
import { ServiceStack } from '../../lib/stack.ts';
import { projectionOf, TABLE_SCHEMA } from '../../shared/data/table-schema.ts';
import { deployedRoutes, notFoundHandlers, readOnly, routeKey, tableActions } from '../../shared/routes.ts';
import { queues, workers } from '../../shared/queue/workers.ts';
import { functionOf, roleStatements, serviceTemplate } from '../helpers/template.ts';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };
let template: Template;
let resources: Record<string, Resource>;
let stack: ServiceStack;

beforeAll(() => {
  // Bundling is skipped here (npm run synth, tested separately, bundles for real).
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new ServiceStack(app, 'TestStack', { env: { account: '123456789012', region: 'eu-west-1' } });
  template = serviceTemplate(stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
});

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const refOf = (v: any): string | undefined => v?.Ref ?? v?.['Fn::GetAtt']?.[0];

function apiIdFor(name: string): string {
  const hit = ofType('AWS::ApiGatewayV2::Api').find(([, r]) => String(r.Properties.Name).endsWith(`-${name}`));
  if (!hit) throw new Error(`no ${name} API`);
  return hit[0];
}

/** The function logical id behind an integration, via its IntegrationUri. */
function functionOfIntegration(integrationId: string): string {
  const uri = resources[integrationId]?.Properties.IntegrationUri;
  const id = refOf(uri);
  if (!id) throw new Error(`integration ${integrationId} has no Lambda target`);
  return id;
}

describe('routes', () => {
  it.each(['core', 'platform'] as const)('every %s route of the route table is exactly one route in its API, on one function of its handler module', (api) => {
    const apiId = apiIdFor(api);
    const routesInApi = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => r.Properties.ApiId.Ref === apiId);
    const expected = [...deployedRoutes(api).map(routeKey), '$default'];
    expect(routesInApi.map(([, r]) => r.Properties.RouteKey).sort()).toEqual([...expected].sort());
    for (const [, route] of routesInApi) {
      const key = route.Properties.RouteKey as string;
      const module = key === '$default' ? notFoundHandlers[api] : deployedRoutes(api).find((r) => routeKey(r) === key)?.handler;
      const integrationId = String(route.Properties.Target['Fn::Join'][1][1].Ref);
      const fn = resources[functionOfIntegration(integrationId)] as Resource;
      expect(fn.Type).toBe('AWS::Lambda::Function');
      expect(fn.Properties.Description, key).toBe(`functions/${module}.ts`);
    }
  });

  it('does not deploy the local token endpoint (Cognito serves it)', () => {
    const keys = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey);
    expect(keys).not.toContain('POST /oauth2/token');
  });

  it('throttles and logs each API stage', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Stage', 2);
    template.allResourcesProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue() },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.anyValue() },
    });
  });

  it("logs each request in the variables an HTTP API sets (not the REST APIs' Common Log Format)", () => {
    for (const [id, stage] of ofType('AWS::ApiGatewayV2::Stage')) {
      const format = stage.Properties.AccessLogSettings.Format as string;
      const line = JSON.parse(format) as Record<string, string>;
      expect(line, id).toMatchObject({
        requestId: '$context.requestId',
        routeKey: '$context.routeKey',
        status: '$context.status',
        integrationError: '$context.integrationErrorMessage',
      });
      // REST-only variables, which an HTTP API leaves empty; and no path, which can name a user.
      expect(format, id).not.toMatch(/\$context\.(resourcePath|identity\.caller|identity\.user|path)\b/);
    }
  });
});

describe('functions', () => {
  it('run nodejs22.x on arm64 with tracing, source maps and Powertools settings', () => {
    const fns = ofType('AWS::Lambda::Function');
    expect(fns.length).toBeGreaterThan(10);
    for (const [id, f] of fns) {
      expect(f.Properties.Runtime, id).toBe('nodejs22.x');
      expect(f.Properties.Architectures, id).toEqual(['arm64']);
      expect(f.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
      expect(f.Properties.Environment.Variables.NODE_OPTIONS, id).toBe('--enable-source-maps');
      expect(f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME, id).toBe('recsearch');
      expect(f.Properties.LoggingConfig?.LogGroup, id).toBeDefined();
    }
  });

  it('load Powertools from the AWS layer of exactly the installed version', () => {
    const params = Object.entries(template.toJSON().Parameters as Record<string, { Type: string; Default: string }>).filter(([, p]) => p.Default?.startsWith('/aws/service/powertools/'));
    expect(params.map(([, p]) => [p.Type, p.Default])).toEqual([['AWS::SSM::Parameter::Value<String>', `/aws/service/powertools/typescript/generic/all/${POWERTOOLS_VERSION}`]]);
    for (const [id, f] of ofType('AWS::Lambda::Function')) expect(f.Properties.Layers, id).toEqual([{ Ref: params[0]?.[0] }]);
  });

  it('have log groups with a retention', () => {
    for (const [id, g] of ofType('AWS::Logs::LogGroup')) expect(g.Properties.RetentionInDays, id).toBeGreaterThan(0);
  });
});

describe('least privilege', () => {
  const policies = () => ofType('AWS::IAM::Policy').flatMap(([id, p]) => (p.Properties.PolicyDocument.Statement as any[]).map((s) => ({ id, s })));
  const actionsOf = (s: any): string[] => [s.Action].flat();

  it("grants no wildcard actions on the table, and no wildcard resources but X-Ray, artifact prefixes, indexes and the training cluster's tasks", () => {
    for (const { id, s } of policies()) {
      for (const a of actionsOf(s)) expect(a, id).not.toMatch(/\*/);
      if ([s.Resource].flat().includes('*'))
        expect(
          actionsOf(s).every((a) => a.startsWith('xray:')),
          id,
        ).toBe(true);
      for (const r of [s.Resource].flat()) {
        const text = JSON.stringify(r);
        // Artifact prefixes, a table's indexes, and (DescribeTasks) the tasks of the training cluster: `task/<cluster name>/*`.
        if (text.includes('*') && text !== '"*"')
          expect(text, id).toMatch(/\/(search|models)\/\*"|index\/|:task\/",\{"Fn::GetAtt":\["TrainingNestedStack[^"]*","Outputs\.[A-Za-z0-9]*TrainingCluster[A-Za-z0-9]*Ref"\]\},"\/\*"/);
      }
    }
  });

  it("grants each function exactly its route's declared table actions", () => {
    const tableId = ofType('AWS::DynamoDB::Table')[0]?.[0] as string;
    const fnByModule = new Map(ofType('AWS::Lambda::Function').map(([id, f]) => [String(f.Properties.Description).replace(/^functions\/|\.ts$/g, ''), { id, f }]));
    for (const api of ['core', 'platform'] as const) {
      for (const r of deployedRoutes(api)) {
        const { f } = fnByModule.get(r.handler) as { f: Resource };
        const roleId = refOf(f.Properties.Role) as string;
        const granted = policies()
          .filter(({ id }) => ((resources[id] as Resource).Properties.Roles as any[]).some((x) => x.Ref === roleId))
          // The tenant quota's UpdateItem on QUOTA# rows only (test/infra/fairness.test.ts) is not the route's own access.
          .filter(({ s }) => !s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'])
          .flatMap(({ s }) => actionsOf(s))
          .filter((a) => a.startsWith('dynamodb:'));
        const expected = [...tableActions(r.access).map((a) => `dynamodb:${a}`), ...(r.access.indexes?.length ? ['dynamodb:Query'] : [])];
        expect(new Set(granted), r.handler).toEqual(new Set(expected));
        expect(tableId).toBeDefined();
      }
    }
  });

  it("grants the console records' routes batch writes only for a training run's log lines, and puts only to creates", () => {
    const tableActionsOf = (module: string): string[] =>
      statementsOf(fnByModule(module))
        .filter((s) => !s.Condition)
        .flatMap((s) => actionsOf(s))
        .filter((a) => a.startsWith('dynamodb:'));
    // ConsoleStore.appendLog (BatchWriteItem) is called by a run's create and its stop; no other console route appends log lines.
    for (const m of ['training-runs/create', 'training-runs/stop']) expect(tableActionsOf(`platform/${m}`), m).toContain('dynamodb:BatchWriteItem');
    const others = [
      'contexts/create',
      'event-types/create',
      'event-types/update',
      'templates/create',
      'templates/update',
      'endpoints/create',
      'endpoints/update',
      'models/update',
      'models/approve',
      'models/promote',
    ];
    for (const m of others) expect(tableActionsOf(`platform/${m}`), m).not.toContain('dynamodb:BatchWriteItem');
    // A PATCH (or approve, stop) changes its record in place (UpdateItem): it puts none.
    for (const m of ['event-types/update', 'templates/update', 'endpoints/update', 'models/update', 'models/approve', 'training-runs/stop']) {
      expect(tableActionsOf(`platform/${m}`), m).toContain('dynamodb:UpdateItem');
      expect(tableActionsOf(`platform/${m}`), m).not.toContain('dynamodb:PutItem');
    }
    // A promotion changes its endpoint in place and puts its audit entry with it (one transaction).
    expect(tableActionsOf('platform/models/promote')).toEqual(expect.arrayContaining(['dynamodb:UpdateItem', 'dynamodb:PutItem']));
  });

  it('lets the console records read by id read that record only (GetItem), and an event type PATCH read the event types (its name decided) and update it', () => {
    const tableActionsOf = (m: string) =>
      statementsOf(fnByModule(m))
        .filter((s) => !s.Condition)
        .flatMap((s) => actionsOf(s))
        .filter((a) => a.startsWith('dynamodb:'))
        .sort();
    // ConsoleStore.get: one GetItem; a template, context, event type or run by id lists nothing (an endpoint or a model version does: the default, the endpoints serving it).
    for (const m of ['contexts/get', 'event-types/get', 'templates/get', 'training-runs/get']) expect(tableActionsOf(`platform/${m}`), m).toEqual(['dynamodb:GetItem']);
    // A PATCH waits until no create of its name at once may take its record back (nameDecided: a Query of the event types); it puts nothing.
    expect(tableActionsOf('platform/event-types/update')).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
  });

  it("lets the client and API key lists Query the tenant's listing index (gsi1) only, never the table", () => {
    for (const m of ['platform/clients/list', 'platform/api-keys/list']) {
      const st = statementsOf(fnByModule(m)).filter((s) => !s.Condition && actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      const onTable = st.filter((s) => !JSON.stringify(s.Resource).includes('/index/')).flatMap((s) => actionsOf(s));
      const onIndexes = st.filter((s) => JSON.stringify(s.Resource).includes('/index/'));
      // GetItem: the API key or console session of every Platform call.
      expect(onTable, m).toEqual(['dynamodb:GetItem']);
      expect(
        onIndexes.flatMap((s) => actionsOf(s)),
        m,
      ).toEqual(['dynamodb:Query']);
      expect(
        [...JSON.stringify(onIndexes.map((s) => s.Resource)).matchAll(/\/index\/(gsi\d)/g)].map((x) => x[1]),
        m,
      ).toEqual(['gsi1']);
    }
  });

  it("lets each function write logs to the log group it is configured with only (its own, or its API's shared one; no AWSLambdaBasicExecutionRole: CreateLogGroup and PutLogEvents on every group)", () => {
    const fns = ofType('AWS::Lambda::Function').filter(([, f]) => String(f.Properties.Description).startsWith('functions/'));
    expect(fns.length).toBeGreaterThan(70);
    for (const [, f] of fns) {
      const m = f.Properties.Description as string;
      const role = resources[refOf(f.Properties.Role) as string] as Resource;
      expect(role.Properties.ManagedPolicyArns, m).toBeUndefined();
      const logs = statementsOf(f).filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
      expect(logs.flatMap((s) => actionsOf(s)).sort(), m).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
      // The group Lambda writes the function's logs to (its LoggingConfig), and no other.
      expect(
        logs.map((s) => s.Resource),
        m,
      ).toEqual([{ 'Fn::GetAtt': [f.Properties.LoggingConfig.LogGroup.Ref, 'Arn'] }]);
    }
  });

  it('lets only the client routes administer Cognito app clients (and only console sign-in check passwords)', () => {
    const cognitoStatements = policies().filter(({ s }) => actionsOf(s).some((a) => a.startsWith('cognito-idp:')));
    const platformFunctions = new Set(
      deployedRoutes('platform')
        .filter((r) => r.api === 'platform')
        .map((r) => r.handler),
    ).size;
    const actions = cognitoStatements.flatMap(({ s }) => actionsOf(s));
    // A console session's check of its user, in every Platform function (test/infra/console.test.ts).
    expect(actions.filter((a) => a === 'cognito-idp:AdminGetUser')).toHaveLength(platformFunctions);
    expect(actions.filter((a) => a !== 'cognito-idp:AdminGetUser').sort()).toEqual([
      'cognito-idp:AdminInitiateAuth',
      'cognito-idp:AdminRespondToAuthChallenge', // console sign-in (test/infra/console.test.ts)
      'cognito-idp:CreateUserPoolClient',
      'cognito-idp:DeleteUserPoolClient', // the client delete, and the create's rollback (test/unit/cognito-grants.test.ts)
      'cognito-idp:DeleteUserPoolClient',
    ]);
  });
});

describe('data', () => {
  it('declares the single table as the data layer uses it', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
        DeletionProtectionEnabled: true,
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: TABLE_SCHEMA.indexes.map((i) =>
          Match.objectLike({
            IndexName: i.name,
            KeySchema: [
              { AttributeName: i.partitionKey, KeyType: 'HASH' },
              { AttributeName: i.sortKey, KeyType: 'RANGE' },
            ],
            Projection: projectionOf(i),
          }),
        ),
      },
    });
  });

  it('keeps artifacts in an encrypted, private, SSL-only bucket', () => {
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        BucketEncryption: Match.anyValue(),
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        VersioningConfiguration: { Status: 'Enabled' },
        LoggingConfiguration: Match.anyValue(),
      }),
    });
    for (const [, p] of ofType('AWS::S3::BucketPolicy')) {
      expect(p.Properties.PolicyDocument.Statement).toEqual(expect.arrayContaining([expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]));
    }
  });

  it("expires the artifacts' replaced versions: deleted index builds, models an erasure wrote again", () => {
    // Versioned, the bucket would keep every earlier version for good: an erased user's history
    // in the model as it was before the erasure, and each index build the embedding worker deleted.
    const [, artifacts] = ofType('AWS::S3::Bucket').find(([id]) => id.startsWith('DataArtifacts') && !id.startsWith('DataArtifactAccessLogs')) as [string, Resource];
    expect(artifacts.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(artifacts.Properties.LifecycleConfiguration?.Rules).toEqual([
      expect.objectContaining({ Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: ARTIFACT_NONCURRENT_DAYS }, ExpiredObjectDeleteMarker: true }),
    ]);
    expect(ARTIFACT_NONCURRENT_DAYS).toBeLessThanOrEqual(30);
  });

  it("keeps the artifact bucket's access logs for a while, not for good", () => {
    const [, logs] = ofType('AWS::S3::Bucket').find(([id]) => id.startsWith('DataArtifactAccessLogs')) as [string, Resource];
    expect(logs.Properties.LifecycleConfiguration?.Rules).toEqual([expect.objectContaining({ Status: 'Enabled', ExpirationInDays: ACCESS_LOG_DAYS })]);
  });
});

describe('auth', () => {
  it('has a resource server whose scopes are exactly service-api/read and service-api/write', () => {
    template.resourceCountIs('AWS::Cognito::UserPoolResourceServer', 1);
    const [, rs] = ofType('AWS::Cognito::UserPoolResourceServer')[0] as [string, Resource];
    expect(rs.Properties.Identifier).toBe('service-api');
    expect(rs.Properties.Scopes.map((s: { ScopeName: string }) => `${rs.Properties.Identifier}/${s.ScopeName}`).sort()).toEqual(['service-api/read', 'service-api/write']);
    template.resourceCountIs('AWS::Cognito::UserPoolDomain', 1);
  });

  it('points every API function at the pool as its token issuer', () => {
    const apiModules = new Set(
      ['core', 'platform'].flatMap((a) =>
        deployedRoutes(a as 'core' | 'platform')
          .filter((r) => r.api !== 'public')
          .map((r) => `functions/${r.handler}.ts`),
      ),
    );
    const apiFns = ofType('AWS::Lambda::Function').filter(([, f]) => apiModules.has(f.Properties.Description));
    expect(apiFns.length).toBe(apiModules.size);
    for (const [id, f] of apiFns) expect(JSON.stringify(f.Properties.Environment.Variables.AUTH_ISSUER), id).toContain('cognito-idp.');
  });

  it('serves each public route (OpenAPI document, health check) on both APIs from one function that verifies no token', () => {
    const publicRoutes = deployedRoutes('core').filter((r) => r.api === 'public');
    expect(publicRoutes.map(routeKey).sort()).toEqual(['GET /health', 'GET /openapi.json']);
    expect(
      deployedRoutes('platform')
        .filter((r) => r.api === 'public')
        .map(routeKey)
        .sort(),
    ).toEqual(['GET /health', 'GET /openapi.json']);
    for (const r of publicRoutes) {
      const fns = ofType('AWS::Lambda::Function').filter(([, f]) => f.Properties.Description === `functions/${r.handler}.ts`);
      expect(fns, r.handler).toHaveLength(1);
      const [fnId, fn] = fns[0] as [string, Resource];
      expect(fn.Properties.Environment.Variables.AUTH_ISSUER, r.handler).toBeUndefined();
      // Invoked by each API (a permission scoped to each).
      const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => refOf(p.Properties.FunctionName) === fnId);
      const apis = new Set(permissions.map(([, p]) => JSON.stringify(p.Properties.SourceArn).match(/"Ref":"([^"]+Api[^"]*)"/)?.[1]));
      expect(apis, r.handler).toEqual(new Set([apiIdFor('core'), apiIdFor('platform')]));
    }
  });
});

const fnByModule = (module: string): Resource => functionOf(resources, module)[1];
const statementsOf = (fn: Resource): any[] => roleStatements(resources, fn);

describe('search and embedding wiring', () => {
  it('lets search read index artifacts, nothing more on the bucket, and send no messages', () => {
    const st = statementsOf(fnByModule('core/search/search'));
    const s3 = st.filter((x) => [x.Action].flat().some((a: string) => a.startsWith('s3:')));
    expect(s3.flatMap((x) => [x.Action].flat())).toEqual(['s3:GetObject', 's3:ListBucket']);
    expect(JSON.stringify(s3[0].Resource)).toContain('/search/*');
    // Listing only under the artifact prefixes: what turns a missing artifact into 404, not 403.
    expect(s3[1].Condition).toEqual({ StringLike: { 's3:prefix': ['search/*'] } });
    // Rebuilds are the maintenance sweep's (or POST /api/search-index/rebuild's) to request.
    for (const m of ['core/search/search', 'core/recommendations/recommend', 'platform/items/search']) {
      expect(
        statementsOf(fnByModule(m)).some((x) => [x.Action].flat().some((a: string) => a.startsWith('sqs:'))),
        m,
      ).toBe(false);
      expect(fnByModule(m).Properties.Environment.Variables.QUEUE_URL_EMBEDDING, m).toBeUndefined();
    }
  });

  it("grants the console's item search the search view's reads only, and the index status the build and the indexes it counts on", () => {
    const dynamo = (m: string) => statementsOf(fnByModule(m)).filter((x) => !x.Condition && [x.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
    const indexesOf = (m: string) => [...JSON.stringify(dynamo(m).map((x) => x.Resource)).matchAll(/\/index\/(gsi\d)/g)].map((x) => x[1]).sort();
    const tableActionsOf = (m: string) =>
      dynamo(m)
        .filter((x) => !JSON.stringify(x.Resource).includes('/index/'))
        .flatMap((x) => [x.Action].flat())
        .sort();
    // platformItemSearch: no user (gsi1), no context, synonyms or experiment (a Query of the table); the view's changes and the items of a page served behind them.
    for (const m of ['platform/items/search', 'platform/items/search-get']) {
      expect(indexesOf(m), m).toEqual(['gsi2', 'gsi4']);
      expect(tableActionsOf(m), m).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem']);
    }
    // indexStatus: the build, the changes since it listed on gsi4, the items waiting counted on gsi3; no view.
    expect(indexesOf('platform/search-index/status')).toEqual(['gsi3', 'gsi4']);
    expect(tableActionsOf('platform/search-index/status')).toEqual(['dynamodb:GetItem']);
  });

  it('grants each function the artifact prefixes it reads and writes only: index builds under search/, models under models/', () => {
    const s3Of = (m: string) => {
      const st = statementsOf(fnByModule(m)).filter((x) => [x.Action].flat().some((a: string) => a.startsWith('s3:')));
      const objects = st.filter((x) => !JSON.stringify(x.Action).includes('s3:ListBucket'));
      const prefixes = (v: unknown) => [...new Set([...JSON.stringify(v).matchAll(/\/(search|models)\/\*/g)].map((x) => x[1]))].sort();
      return {
        gets: prefixes(objects.filter((x) => [x.Action].flat().includes('s3:GetObject')).map((x) => x.Resource)),
        puts: prefixes(objects.filter((x) => [x.Action].flat().includes('s3:PutObject')).map((x) => x.Resource)),
        listed: st.filter((x) => JSON.stringify(x.Action).includes('s3:ListBucket')).flatMap((x) => x.Condition.StringLike['s3:prefix']),
      };
    };
    const expected: Record<string, { gets: string[]; puts: string[] }> = {
      // The index build and its pointer (buildIndex); no model.
      'workers/embed': { gets: ['search'], puts: ['search'] },
      // The run's version, stored and read back (runTraining, withoutErased); no index build.
      'workers/train': { gets: ['models'], puts: ['models'] },
      // The stored versions written again without the user (eraseUser, withoutErased); no index build.
      'platform/users/erase': { gets: ['models'], puts: ['models'] },
      // Index pointers (the embedding sweep); the stored versions, written again by an erasure it finishes (sweepErasures).
      'workers/maintain': { gets: ['models', 'search'], puts: ['models'] },
      'core/search/search': { gets: ['search'], puts: [] },
      'platform/items/search': { gets: ['search'], puts: [] },
      'platform/items/search-get': { gets: ['search'], puts: [] },
      'platform/search-index/status': { gets: ['search'], puts: [] },
      // Recommendations read the served model too (loadModel).
      'core/recommendations/recommend': { gets: ['models', 'search'], puts: [] },
      'console-session/reads': { gets: ['models', 'search'], puts: [] },
    };
    for (const [m, want] of Object.entries(expected)) {
      const got = s3Of(m);
      expect({ gets: got.gets, puts: got.puts }, m).toEqual(want);
      expect([...got.listed].sort(), m).toEqual(want.gets.map((p) => `${p}/*`));
    }
  });

  it('lets item create and update enqueue embeddings, and delete not', () => {
    for (const m of ['core/items/create', 'core/items/update']) {
      expect(
        statementsOf(fnByModule(m)).some((x) => [x.Action].flat().includes('sqs:SendMessage')),
        m,
      ).toBe(true);
    }
    expect(statementsOf(fnByModule('core/items/delete')).some((x) => [x.Action].flat().includes('sqs:SendMessage'))).toBe(false);
    expect(statementsOf(fnByModule('core/items/get')).some((x) => [x.Action].flat().some((a: string) => a.startsWith('sqs:')))).toBe(false);
  });

  it('feeds the embedding worker from its queue with partial batch failures, and runs maintenance every minute', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionResponseTypes: ['ReportBatchItemFailures'], BatchSize: 10 });
    const embed = statementsOf(fnByModule('workers/embed')).flatMap((x) => [x.Action].flat());
    expect(embed).toEqual(expect.arrayContaining(['s3:GetObject', 's3:PutObject', 'dynamodb:UpdateItem']));
    // It deletes replaced index builds, under search/ only; no other function deletes artifacts.
    const deletes = statementsOf(fnByModule('workers/embed')).filter((x) => [x.Action].flat().includes('s3:DeleteObject'));
    expect(deletes).toHaveLength(1);
    expect(JSON.stringify(deletes[0].Resource)).toContain('/search/*');
    expect(JSON.stringify(deletes[0].Resource)).not.toContain('/models/*');
    const deleters = ofType('AWS::Lambda::Function').filter(([, f]) => statementsOf(f).some((x) => [x.Action].flat().includes('s3:DeleteObject')));
    expect(deleters.map(([, f]) => f.Properties.Description)).toEqual(['functions/workers/embed.ts']);
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
    // The sweep reads the embedding queue's backlog; no API function does (the SQS consumers
    // get it with their event source mappings).
    const depth = ofType('AWS::Lambda::Function').filter(([, f]) => statementsOf(f).some((x) => [x.Action].flat().includes('sqs:GetQueueAttributes')));
    expect(depth.map(([, f]) => f.Properties.Description).sort()).toEqual(['functions/workers/embed.ts', 'functions/workers/maintain.ts', 'functions/workers/train.ts']);
    expect(fnByModule('workers/maintain').Properties.Environment.Variables.QUEUE_URL_EMBEDDING).toBeDefined();
    // The key its logs name users by (`userRef`): the stack id's UUID, resolved at deployment.
    expect(fnByModule('workers/maintain').Properties.Environment.Variables.USER_REF_KEY).toEqual({ 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] });
  });

  it('grants Bedrock InvokeModel on the Titan model only when chosen', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const bedrock = Template.fromStack(new ServiceStack(app, 'BedrockStack', { embeddingProvider: 'bedrock', env: { account: '123456789012', region: 'eu-west-1' } }));
    const actions = Object.values(bedrock.toJSON().Resources as Record<string, Resource>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((p) => (p.Properties.PolicyDocument.Statement as any[]).filter((x) => [x.Action].flat().includes('bedrock:InvokeModel')));
    expect(actions.length).toBeGreaterThan(0);
    for (const a of actions) expect(JSON.stringify(a.Resource)).toContain('foundation-model/amazon.titan-embed-text-v2:0');
    const local = ofType('AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[]);
    expect(local.some((x) => [x.Action].flat().includes('bedrock:InvokeModel'))).toBe(false);
  });
});

describe('workers', () => {
  it('pairs every queue with a dead-letter queue through a redrive policy', () => {
    const all = ofType('AWS::SQS::Queue');
    const withRedrive = all.filter(([, q]) => q.Properties.RedrivePolicy);
    expect(withRedrive).toHaveLength(Object.keys(queues).length);
    for (const [id, q] of withRedrive) {
      const dlq = refOf(q.Properties.RedrivePolicy.deadLetterTargetArn) as string;
      expect(resources[dlq]?.Type, id).toBe('AWS::SQS::Queue');
      expect(q.Properties.RedrivePolicy.maxReceiveCount, id).toBeGreaterThan(0);
      expect(q.Properties.SqsManagedSseEnabled, id).toBe(true);
    }
    // AWS's rule for SQS event sources: the visibility timeout at least six times the function's
    // timeout, so that a batch whose invocation was throttled is retried before it reappears.
    for (const w of workers) expect(queues[w.queue].visibilityTimeoutSeconds, w.handler).toBeGreaterThanOrEqual(6 * w.timeoutSeconds);
    expect(all).toHaveLength(2 * Object.keys(queues).length);
  });
});

describe('operations', () => {
  it('alarms on each dead-letter queue, each API 5xx rate and throttles of every function', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm');
    const dlqAlarms = alarms.filter(([, a]) => a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible');
    expect(dlqAlarms).toHaveLength(Object.keys(queues).length);
    const rateAlarms = alarms.filter(([, a]) => JSON.stringify(a.Properties.Metrics ?? []).includes('5xx'));
    expect(rateAlarms).toHaveLength(2);
    // Every function's throttles are summed by exactly one alarm (ten functions to an alarm).
    const throttled = alarms.flatMap(([, a]) =>
      (a.Properties.Metrics ?? []).filter((m: any) => m.MetricStat?.Metric?.MetricName === 'Throttles').map((m: any) => refOf(m.MetricStat.Metric.Dimensions[0].Value)),
    );
    expect(throttled.sort()).toEqual(
      ofType('AWS::Lambda::Function')
        .map(([id]) => id)
        .sort(),
    );
    const throttleAlarms = alarms.filter(([, a]) => JSON.stringify(a.Properties.Metrics ?? []).includes('Throttles'));
    expect(throttleAlarms).toHaveLength(Math.ceil(ofType('AWS::Lambda::Function').length / 10));
    // A function not invoked has no data point; without FILL the sum would have none either.
    for (const [id, a] of throttleAlarms) {
      const expression = (a.Properties.Metrics as any[]).find((m) => m.Expression)?.Expression as string;
      const ids = (a.Properties.Metrics as any[]).filter((m) => m.MetricStat).map((m) => m.Id as string);
      expect(expression, id).toBe(ids.map((t) => `FILL(${t}, 0)`).join(' + '));
    }
  });

  it('notifies one SNS topic (SSL only, an output) when any alarm goes off and when it recovers; alarmEmail subscribes an address', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm');
    const [topic, ...others] = ofType('AWS::SNS::Topic');
    expect(others).toHaveLength(0);
    const [topicId] = topic as [string, Resource];
    // Was: no action on any alarm (nobody heard of a dead-lettered message or a 5xx spike).
    for (const [id, a] of alarms) {
      expect((a.Properties.AlarmActions as unknown[]).map(refOf), id).toEqual([topicId]);
      expect((a.Properties.OKActions as unknown[]).map(refOf), id).toEqual([topicId]);
    }
    const policy = ofType('AWS::SNS::TopicPolicy').find(([, p]) => JSON.stringify(p.Properties.Topics).includes(topicId));
    expect(JSON.stringify(policy?.[1].Properties.PolicyDocument)).toContain('aws:SecureTransport');
    expect(refOf(Template.fromStack(stack).toJSON().Outputs.AlarmTopicArn.Value)).toBe(topicId);
    expect(ofType('AWS::SNS::Subscription')).toHaveLength(0);
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], alarmEmail: 'ops@example.com' } });
    const mailed = new ServiceStack(app, 'Mailed', { env: { account: '123456789012', region: 'eu-west-1' } });
    const subs = Object.values(Template.fromStack(mailed).toJSON().Resources as Record<string, Resource>).filter((r) => r.Type === 'AWS::SNS::Subscription');
    expect(subs.map((r) => [r.Properties.Protocol, r.Properties.Endpoint])).toEqual([['email', 'ops@example.com']]);
    expect(() => new ServiceStack(new App({ context: { 'aws:cdk:bundling-stacks': [], alarmEmail: 'not an address' } }), 'Bad')).toThrow(/alarmEmail must be an email address/);
  }, 60_000);

  it("keeps every alarm description inside CloudWatch's 1,024 characters, whatever the stack's name", () => {
    // A throttle alarm names its ten functions; a stack name may be 128 characters (CloudFormation's most).
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const long = new ServiceStack(app, `R${'x'.repeat(127)}`, { env: { account: '123456789012', region: 'eu-west-1' } });
    const alarms = Object.entries(Template.fromStack(long).toJSON().Resources as Record<string, Resource>).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(5);
    for (const [id, a] of alarms) expect((a.Properties.AlarmDescription as string).length, id).toBeLessThanOrEqual(1024);
  }, 60_000);

  it("stays inside CloudFormation's 500 resources per stack, with room for more routes", () => {
    // The service stack, and the nested stack of the Platform API.
    for (const t of [Template.fromStack(stack), Template.fromStack(stack.platformStack)]) expect(Object.keys(t.toJSON().Resources).length).toBeLessThanOrEqual(400);
  });

  it('outputs base_url, console_url and auth_url', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Description: string }>;
    expect(outputs.BaseUrl?.Description).toMatch(/^base_url/);
    expect(outputs.ConsoleUrl?.Description).toMatch(/^console_url/);
    expect(outputs.AuthUrl?.Description).toMatch(/^auth_url/);
  });
});

describe('experiment exposures', () => {
  it('are granted (PutItem, BatchWriteItem, UpdateItem, and DeleteItem to take one back) to the two serving routes, which still count as read-only', () => {
    const served = deployedRoutes('core').filter((r) => r.access.exposures);
    expect(served.map((r) => r.handler).sort()).toEqual(['core/recommendations/recommend', 'core/search/search']);
    for (const r of served) {
      // BatchWriteItem: a group's exposure rows (shared/data/experiments.ts); the local stack refuses the call without it (local/grants.ts).
      expect(tableActions(r.access)).toEqual(expect.arrayContaining(['PutItem', 'BatchWriteItem', 'UpdateItem', 'DeleteItem']));
      expect(readOnly(r)).toBe(true);
    }
  });
});
