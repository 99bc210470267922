import { Template } from 'aws-cdk-lib/assertions';
import type { ServiceStack } from '../../lib/stack.ts';
import { schedules, workers } from '../../shared/queue/workers.ts';
import { deployedRoutes, notFoundHandlers } from '../../shared/routes.ts';

type Json = Record<string, unknown>;

/** Replaces in `v` what `swap` gives a replacement for (undefined: keep, and look inside). */
function rewrite(v: unknown, swap: (o: Json) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => rewrite(x, swap));
  if (v && typeof v === 'object') {
    const o = v as Json;
    const to = swap(o);
    if (to !== undefined) return to;
    return Object.fromEntries(Object.keys(o).map((k) => [k, rewrite(o[k], swap)]));
  }
  return v;
}
const only = (o: Json, key: string): unknown => (Object.keys(o).length === 1 ? o[key] : undefined);

/**
 * The service stack's template with the Platform API's nested stack folded in, as one template:
 * the nested stack's resources beside the parent's, each reference to a value the parent passes
 * replaced by that value (a table grant in the nested stack names the table as the parent
 * does). Template assertions then hold for both APIs alike, wherever a route's resources live.
 */
export function serviceTemplate(stack: ServiceStack): Template {
  const root = Template.fromStack(stack).toJSON() as { Resources: Record<string, Json>; Parameters?: Json; Outputs?: Json };
  const nested = Template.fromStack(stack.platformStack).toJSON() as { Resources: Record<string, Json>; Outputs?: Json };
  const holder = Object.entries(root.Resources).find(([id, r]) => r.Type === 'AWS::CloudFormation::Stack' && id.startsWith(stack.platformStack.node.id));
  if (!holder) throw new Error('no nested stack resource for the Platform API');
  const passed = ((holder[1].Properties as Json | undefined)?.Parameters ?? {}) as Json;
  // In the nested stack: a parameter the parent passes is the value it passes.
  const fromParent = (o: Json) => {
    const ref = only(o, 'Ref');
    return typeof ref === 'string' && Object.hasOwn(passed, ref) ? passed[ref] : undefined;
  };
  const nestedResources = Object.fromEntries(Object.entries(nested.Resources).map(([id, r]) => [id, rewrite(r, fromParent) as Json]));
  const outputs = Object.fromEntries(Object.entries(nested.Outputs ?? {}).map(([k, o]) => [k, rewrite((o as Json).Value, fromParent)]));
  // In the parent: an output of the nested stack is the value it outputs.
  const fromNested = (o: Json) => {
    const att = only(o, 'Fn::GetAtt');
    if (!Array.isArray(att) || att[0] !== holder[0] || typeof att[1] !== 'string' || !att[1].startsWith('Outputs.')) return undefined;
    return outputs[att[1].slice('Outputs.'.length)];
  };
  const resources: Record<string, Json> = {};
  for (const [id, r] of Object.entries(root.Resources)) resources[id] = rewrite(r, fromNested) as Json;
  for (const [id, r] of Object.entries(nestedResources)) {
    if (Object.hasOwn(resources, id)) throw new Error(`logical id ${id} in both stacks`);
    resources[id] = r;
  }
  return Template.fromJSON({ ...root, Resources: resources });
}

/** A synthesized resource, as the template assertions read it. */
type Resource = { Type: string; Properties: Record<string, any> };

/** The function of a handler module (`functions/<module>.ts`, its description): its logical id and resource. */
export function functionOf<R extends Resource>(resources: Record<string, R>, module: string): [string, R] {
  const hit = Object.entries(resources).find(([, f]) => f.Type === 'AWS::Lambda::Function' && f.Properties.Description === `functions/${module}.ts`);
  if (!hit) throw new Error(`no function for ${module}`);
  return hit;
}

/** The statements of every policy attached to a function's role. */
export function roleStatements(resources: Record<string, Resource>, fn: Resource): any[] {
  const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
  return Object.values(resources)
    .filter((p) => p.Type === 'AWS::IAM::Policy' && (p.Properties.Roles as any[]).some((x) => x.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as any[]);
}

/** The handler modules outside one API's routes: the preflight, both 404s, the other API's routes, the workers and the schedules. */
export function modulesOutside(api: 'core' | 'platform'): Set<string> {
  return new Set([
    'cors/preflight',
    notFoundHandlers.core,
    notFoundHandlers.platform,
    ...deployedRoutes(api === 'core' ? 'platform' : 'core').map((r) => r.handler),
    ...workers.map((w) => w.handler),
    ...schedules.map((s) => s.handler),
  ]);
}
