import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { build } from 'esbuild';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { ACKNOWLEDGED, applyNag } from '../../lib/nag.ts';
import { lambdaAliases, POWERTOOLS_FROM_LAYER } from '../../lib/service-function.ts';
import { ServiceStack } from '../../lib/stack.ts';

const out = mkdtempSync(join(tmpdir(), 'recsearch-synth-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('npm run synth', () => {
  it('synthesises offline, bundling every function, with cdk-nag AwsSolutions passing', () => {
    // The same CLI and app as `npm run synth`; no AWS account or credentials needed.
    const run = spawnSync('node_modules/.bin/cdk', ['synth', '--quiet', '--output', out], {
      encoding: 'utf8',
      env: { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: '' },
    });
    expect(run.status, run.stderr).toBe(0);
    // No deprecated CDK API: its warning would greet everyone who runs `npm run synth`.
    expect(run.stderr).not.toMatch(/is deprecated/);
    const template = JSON.parse(readFileSync(join(out, 'RecSearch.template.json'), 'utf8'));
    // The service's functions (the console's nested stack holds CDK's BucketDeployment handler and the web app's asset).
    const fns = Object.values(template.Resources as Record<string, { Type: string; Metadata?: Record<string, string> }>).filter((r) => r.Type === 'AWS::Lambda::Function');
    const assets = fns.map((f) => String(f.Metadata?.['aws:asset:path']));
    expect(new Set(assets).size).toBe(fns.length);
    for (const a of assets) expect(readdirSync(out)).toContain(a);
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
      // The stack embeds locally (the default), so no bundle carries the Bedrock client,
      // nor the SDK's event-stream code that only it would use.
      expect(code, a).not.toContain('BedrockRuntimeClient');
      expect(code, a).not.toContain(EVENT_STREAM_CODE);
    }
  }, 180_000);
});

// A message from the SDK's event-stream header codec: present wherever the real module is bundled.
const EVENT_STREAM_CODE = 'header name exceeds 255 bytes';

describe('event-stream code in the bundles', () => {
  const bundle = async (provider: 'local' | 'bedrock') => {
    const r = await build({
      entryPoints: ['functions/core/search/search.ts'],
      bundle: true,
      minify: true,
      platform: 'node',
      target: 'node22',
      format: 'esm',
      write: false,
      mainFields: ['module', 'main'],
      external: [...POWERTOOLS_FROM_LAYER],
      alias: lambdaAliases(provider),
      define: { 'process.env.EMBEDDING_PROVIDER': JSON.stringify(provider) },
    });
    return r.outputFiles[0]?.text ?? '';
  };

  it('stays in a Bedrock stack, whose client streams events', async () => {
    const code = await bundle('bedrock');
    expect(code).toContain('BedrockRuntimeClient');
    expect(code).toContain(EVENT_STREAM_CODE);
  });

  it('is replaced by a stand-in that fails loudly in a stack that embeds locally', async () => {
    const code = await bundle('local');
    expect(code).not.toContain(EVENT_STREAM_CODE);
    expect(code).toContain('Event-stream operations are not bundled');
    const stub = await import('../../shared/aws/no-event-streams.ts');
    for (const call of [() => stub.eventStreamSerdeProvider(), () => stub.resolveEventStreamSerdeConfig(), () => new stub.EventStreamSerde(), () => new stub.EventStreamCodec()]) {
      expect(call).toThrow(/Event-stream operations are not bundled in this function/);
    }
  });
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
