import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceStack } from '../../lib/stack.ts';
import { keys as dataKeys } from '../../shared/data/keys.ts';
import { deployedRoutes, readOnly, routeKey } from '../../shared/routes.ts';
import { serviceTemplate } from '../helpers/template.ts';

/* The control plane's routes and its maintenance grant, in the synthesised template. */
type Resource = { Type: string; Properties: Record<string, any> };
let resources: Record<string, Resource>;

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new ServiceStack(app, 'ControlStack', { env: { account: '123456789012', region: 'eu-west-1' } });
  resources = serviceTemplate(stack).toJSON().Resources as Record<string, Resource>;
});

const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);
const tableActionsOf = (module: string): string[] => {
  const fn = ofType('AWS::Lambda::Function').find((f) => f.Properties.Description === `functions/${module}.ts`);
  if (!fn) throw new Error(`no function for ${module}`);
  const role = fn.Properties.Role['Fn::GetAtt'][0];
  // Leaves out a console session's check recorded on its row (UpdateItem on CONSOLESESSION# rows only, test/infra/console.test.ts): no tenant data.
  return ofType('AWS::IAM::Policy')
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((x) => x.Ref === role))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Condition?: unknown }[])
    .filter((s) => !JSON.stringify(s.Condition ?? {}).includes(dataKeys.consoleSessionPkPrefix))
    .flatMap((s) => [s.Action].flat())
    .filter((a) => a.startsWith('dynamodb:'));
};

describe('control plane', () => {
  it('deploys every rules, segments, experiments, rerank-controls and audit route on the Platform API', () => {
    const keys = ofType('AWS::ApiGatewayV2::Route').map((r) => r.Properties.RouteKey);
    const control = deployedRoutes('platform').filter((r) => /^platform\/(rules|segments|experiments|rerank|audit)\//.test(r.handler));
    expect(control.map(routeKey).sort()).toEqual([
      'DELETE /api/rules/{id}',
      'DELETE /api/segments/{id}',
      'GET /api/audit',
      'GET /api/experiments',
      'GET /api/experiments/{id}',
      'GET /api/rerank-controls',
      'GET /api/rules',
      'GET /api/rules/{id}',
      'GET /api/segments',
      'GET /api/segments/{id}',
      'PATCH /api/experiments/{id}',
      'PATCH /api/rules/{id}',
      'PATCH /api/segments/{id}',
      'POST /api/experiments',
      'POST /api/rules',
      'POST /api/segments',
      'PUT /api/rerank-controls',
    ]);
    for (const r of control) expect(keys).toContain(routeKey(r));
    // Reads change nothing; only a deletion may delete.
    for (const m of ['platform/rules/get', 'platform/rules/list', 'platform/audit/list', 'platform/experiments/get', 'platform/rerank/get']) {
      expect(
        tableActionsOf(m).every((a) => a === 'dynamodb:GetItem' || a === 'dynamodb:Query'),
        m,
      ).toBe(true);
    }
    expect(tableActionsOf('platform/segments/update')).not.toContain('dynamodb:DeleteItem');
  });

  it("grants each change's TransactWriteItems its writes (IAM checks each as its own action): the record and its audit entry, and the entry taken out with a change taken back", () => {
    // Every change writes its record (PutItem, or UpdateItem on its revision) with its audit entry (PutItem).
    for (const m of ['rules/create', 'rules/update', 'rules/delete', 'segments/create', 'segments/update', 'segments/delete', 'experiments/create', 'experiments/update', 'rerank/put'])
      expect(tableActionsOf(`platform/${m}`), m).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem']));
    // A create or a PATCH taken back after its write (a segment deleted meanwhile, another experiment
    // Running) deletes its entry in the transaction that puts the record back (DeleteItem): without
    // it DynamoDB refuses the whole transaction, and the start stays Running beside the other.
    for (const m of ['rules/create', 'rules/update', 'experiments/create', 'experiments/update']) expect(tableActionsOf(`platform/${m}`), m).toContain('dynamodb:DeleteItem');
  });

  it('lets the maintenance pass store segment size estimates, start scheduled runs, end runs whose task stopped and sweep ended erasures', () => {
    // UpdateItem: segment estimates, a template's claimed due time, an interrupted run's ending;
    // PutItem and BatchWriteItem: the scheduled run's job record and its log lines
    // (shared/domain/automation.ts); GetItem: a run, and the version it was storing, read again
    // before it is ended (shared/recs/launcher.ts sweepTaskRuns); DeleteItem: an ended erasure's
    // sweep deletes the user's events an ingest that raced it wrote, the answers stored under
    // their keys, and its own row (shared/domain/erasure.ts sweepErasures; until 2026-12-03 the
    // pass never deleted).
    expect(new Set(tableActionsOf('workers/maintain'))).toEqual(
      new Set(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem', 'dynamodb:DeleteItem']),
    );
  });
});

describe('popularity snapshots', () => {
  it('are read and stored (GetItem, PutItem) by the functions that serve popularity without a model, whose Core routes still count as read-only', () => {
    for (const m of ['core/recommendations/recommend', 'core/search/search', 'console-session/reads'])
      expect(tableActionsOf(m), m).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem']));
    for (const r of deployedRoutes('core').filter((x) => x.access.popularity)) expect(readOnly(r), routeKey(r)).toBe(true);
  });
});
