import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { ACKNOWLEDGED, applyNag } from '../../lib/nag.ts';
import { ServiceStack } from '../../lib/stack.ts';

const out = mkdtempSync(join(tmpdir(), 'recsearch-synth-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('npm run synth', () => {
  it('synthesises offline, bundling every function, with cdk-nag AwsSolutions passing', () => {
    // The same CLI and app as `npm run synth`; no AWS account or credentials needed.
    execFileSync('node_modules/.bin/cdk', ['synth', '--quiet', '--output', out], {
      stdio: 'pipe',
      env: { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: '' },
    });
    const template = JSON.parse(readFileSync(join(out, 'RecSearch.template.json'), 'utf8'));
    const fns = Object.values(template.Resources as Record<string, { Type: string }>).filter((r) => r.Type === 'AWS::Lambda::Function');
    const assets = readdirSync(out).filter((d) => d.startsWith('asset.'));
    expect(assets.length).toBe(fns.length);
    for (const a of assets) {
      expect(existsSync(join(out, a, 'index.mjs')), a).toBe(true);
      expect(existsSync(join(out, a, 'index.mjs.map')), a).toBe(true);
    }
  }, 180_000);
});

describe('cdk-nag', () => {
  it('fails synthesis on a finding nobody acknowledged', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new ServiceStack(app, 'NagProbe');
    new sqs.Queue(stack, 'PlainQueue'); // no DLQ, no SSL enforcement
    applyNag(app, stack);
    expect(() => app.synth()).toThrow(/[Vv]alidation/);
  });

  it('gives every acknowledgement a reason', () => {
    for (const a of ACKNOWLEDGED) {
      expect(a.id).toMatch(/^AwsSolutions-/);
      expect(a.reason.length, a.id).toBeGreaterThan(40);
    }
  });
});
