import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceStack } from '../../lib/stack.ts';
import { serviceTemplate } from '../helpers/template.ts';

/*
 * Issue 18, defect 2: the Powertools tracer records a handler's response (and a thrown error) as
 * X-Ray metadata unless told not to. Responses hold plaintext API keys and client secrets
 * (POST /api/api-keys, POST /api/clients) and every Core response holds tenant data; errors can
 * carry request values. Every function turns both off.
 */
type Fn = { Type: string; Properties: { Description?: string; Environment?: { Variables?: Record<string, unknown> } } };
let functions: [string, Fn][];

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new ServiceStack(app, 'TracingStack', { env: { account: '123456789012', region: 'eu-west-1' } });
  const resources = serviceTemplate(stack).toJSON().Resources as Record<string, Fn>;
  functions = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
});

describe('tracing', () => {
  it('no function records its responses or errors in X-Ray', () => {
    expect(functions.length).toBeGreaterThan(10);
    for (const [id, f] of functions) {
      const vars = f.Properties.Environment?.Variables ?? {};
      expect(vars.POWERTOOLS_TRACER_CAPTURE_RESPONSE, `${id} (${f.Properties.Description})`).toBe('false');
      expect(vars.POWERTOOLS_TRACER_CAPTURE_ERROR, `${id} (${f.Properties.Description})`).toBe('false');
    }
  });

  it('covers the functions whose responses hold secrets', () => {
    const described = functions.map(([, f]) => f.Properties.Description);
    expect(described).toContain('functions/platform/api-keys/create.ts');
    expect(described).toContain('functions/platform/clients/create.ts');
  });
});
