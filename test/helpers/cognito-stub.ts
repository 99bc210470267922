import type { ServerResponse } from 'node:http';
import type { AwsCallOptions } from '../../shared/aws/signed-fetch.ts';
import { cognitoClient } from '../../shared/console-auth/cognito.ts';
import { serveLoopback } from './loopback.ts';
import { credentials, region, verifySignature } from './sigv4.ts';

/**
 * An answer of the stand-in: a JSON body (200), Cognito's error (`__type`, HTTP 400 unless
 * given; with `holdBody`, its status and headers and the first bytes of its body, the rest never
 * sent), or `HOLD`: no answer at all (Cognito hanging), until the stand-in closes.
 */
export type CognitoAnswer = object | { error: string; message?: string; status?: number; holdBody?: boolean };
export const HOLD = { hold: true } as const;

/**
 * A stand-in for Cognito's user-pool API on loopback: checks each request's SigV4 signature
 * (service `cognito-idp`) and JSON 1.1 headers, records the action (`X-Amz-Target`) and its
 * input, and answers what `answers[action]` says (a function of the input, or a fixed answer).
 * An action without an answer is a 400 of a code Cognito never sends, which nothing maps (until
 * 2026-12-05 `InvalidParameterException`, which the sign-in read as a wrong password for a while):
 * a test that forgot one fails, it does not pass on a "no user".
 */
export async function cognitoStub() {
  const calls: { action: string; input: Record<string, unknown> }[] = [];
  const answers: Record<string, CognitoAnswer | ((input: Record<string, unknown>) => CognitoAnswer)> = {};
  const held: ServerResponse[] = [];
  const server = await serveLoopback((req, body, res) => {
    const reply = (status: number, value: object) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(value));
    };
    const bad = verifySignature(req, body, 'cognito-idp');
    if (bad) return reply(400, { __type: 'InvalidSignatureException', message: bad });
    const target = String(req.headers['x-amz-target'] ?? '');
    if (!target.startsWith('AWSCognitoIdentityProviderService.') || req.headers['content-type'] !== 'application/x-amz-json-1.1')
      return reply(400, { __type: 'UnknownOperationException', message: target });
    const action = target.slice(target.indexOf('.') + 1);
    const input = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    calls.push({ action, input });
    const a = answers[action];
    const answer = typeof a === 'function' ? a(input) : a;
    if (answer === HOLD) return void held.push(res);
    if (!answer) return reply(400, { __type: 'CognitoStandInHasNoAnswer', message: `the Cognito stand-in has no answer for ${action}` });
    if ('error' in answer && typeof answer.error === 'string' && (answer as { holdBody?: boolean }).holdBody) {
      res.writeHead((answer as { status?: number }).status ?? 400, { 'content-type': 'application/x-amz-json-1.1' });
      res.write(JSON.stringify({ __type: `com.amazonaws.cognito#${answer.error}`, message: answer.error }).slice(0, 12));
      return void held.push(res);
    }
    if ('error' in answer && typeof answer.error === 'string')
      return reply((answer as { status?: number }).status ?? 400, { __type: `com.amazonaws.cognito#${answer.error}`, message: (answer as { message?: string }).message ?? answer.error });
    reply(200, answer);
  });
  return {
    /** A client of the stand-in, signed with the tests' credentials (one attempt unless `maxAttempts`). */
    client: (options: AwsCallOptions = {}) => cognitoClient(region, { url: server.base, credentials, maxAttempts: 1, ...options }),
    answers,
    calls,
    /** The actions called so far, each once, sorted. */
    actions: () => [...new Set(calls.map((c) => c.action))].sort(),
    reset() {
      calls.length = 0;
      for (const k of Object.keys(answers)) delete answers[k];
    },
    close: () => {
      for (const res of held.splice(0)) res.destroy();
      return server.close();
    },
  };
}
