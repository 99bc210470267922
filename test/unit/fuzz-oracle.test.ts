import { describe, expect, it } from 'vitest';
import { routes } from '../../shared/routes.ts';
import { apiOf, problemWith, type Answer, type FuzzCase } from '../helpers/fuzz.ts';

/** The fuzzer's judgement of an answer: which API it expects, and what it calls a finding. */
const route = routes[0] as (typeof routes)[number];
const caseOf = (method: string, path: string): FuzzCase => ({ n: 1, route, mutation: 'path', method, path, headers: {}, body: undefined, sent: undefined });
const html = (status: number): Answer => ({ status, headers: { 'content-type': 'text/html; charset=utf-8' }, text: '<!doctype html><title>console</title>', ms: 1 });

describe('the fuzzer reads a path as the server routes it', () => {
  it('resolves dot segments before choosing the API', () => {
    expect(apiOf(caseOf('GET', '/v1/items/../../api/items'))).toBe('platform');
    expect(apiOf(caseOf('GET', '/api/items/../../v1/items'))).toBe('core');
    expect(apiOf(caseOf('POST', '/api/x/../../oauth2/token?grant_type=x'))).toBe('auth');
    // As the server answers a path no route takes: `/console` itself is the Platform's too.
    expect(apiOf(caseOf('DELETE', '/console'))).toBe('platform');
  });

  it("takes the console's page where the path resolves to it, and nowhere else", () => {
    // `/console/session/..` is `/console/`: the console's page is the right answer.
    expect(problemWith(caseOf('GET', '/console/session/..'), html(200))).toBeUndefined();
    expect(problemWith(caseOf('GET', '/console/assets/app.js'), html(200))).toBeUndefined();
    // The session route and the Platform API answer JSON.
    expect(problemWith(caseOf('GET', '/console/session'), html(200))).toMatch(/not JSON/);
    expect(problemWith(caseOf('GET', '/console/x/../session'), html(200))).toMatch(/not JSON/);
    expect(problemWith(caseOf('GET', '/api/items'), html(200))).toMatch(/not JSON/);
    // An error is the API's envelope wherever the path points.
    expect(problemWith(caseOf('GET', '/console/session/..'), html(404))).toMatch(/not JSON/);
  });
});
