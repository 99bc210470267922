import { Template } from 'aws-cdk-lib/assertions';
import type { ServiceStack } from '../../lib/stack.ts';

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
