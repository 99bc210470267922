import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { ACKNOWLEDGED, applyNag } from '../../lib/nag.ts';
import { POWERTOOLS_FROM_LAYER } from '../../lib/service-function.ts';
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
    const builtins = new Set(builtinModules);
    for (const a of assets) {
      expect(existsSync(join(out, a, 'index.mjs')), a).toBe(true);
      expect(existsSync(join(out, a, 'index.mjs.map')), a).toBe(true);
      const code = readFileSync(join(out, a, 'index.mjs'), 'utf8');
      // Outside the bundle: Node built-ins and the Powertools layer, nothing else.
      const imported = [...code.matchAll(/(?:^|[;}\s])import\s*(?:[\w$*{},\s]+from\s*)?["']([^"']+)["']/g)].map((m) => m[1] as string);
      for (const spec of imported) {
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string);
        expect(builtins.has(spec.replace(/^node:/, '')) || (POWERTOOLS_FROM_LAYER as readonly string[]).includes(pkg), `${a} imports ${spec}`).toBe(true);
      }
      // The SDK's default credential chain (SSO, INI, IMDS, STS) is replaced by the env provider.
      expect(code, a).not.toContain('Could not load credentials from any providers');
      // The stack embeds locally (the default), so no bundle carries the Bedrock client.
      expect(code, a).not.toContain('BedrockRuntimeClient');
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
