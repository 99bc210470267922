import { issueToken } from '#shared/auth/token-endpoint';
import { credentialStore } from '#shared/data/index';
import { baseChain, bodyText, header } from '#shared/http/base';
import { ok, toResult } from '#shared/http/respond';
import type { ApiContext, HttpEvent, HttpResult } from '#shared/http/types';

/** POST /oauth2/token of the local stack (Cognito's domain serves it on AWS). */
export const handler = baseChain('oauth').handler(async (event: HttpEvent, context: ApiContext): Promise<HttpResult> => {
  const token = await issueToken(credentialStore(), {
    authorization: header(event, 'authorization'),
    contentType: header(event, 'content-type'),
    body: bodyText(event) ?? '',
    sourceIp: event.requestContext.http.sourceIp,
  });
  return toResult('oauth', context.state.requestId, ok(token));
});
