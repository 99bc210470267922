/**
 * The code and message of an AWS JSON protocol's error body (DynamoDB's, S3's when asked for
 * JSON): `{"__type": "com.amazonaws.dynamodb.v20120810#Code", "message": ...}` (or `Message`).
 * Undefined for a body that is not such JSON (a proxy's answer, S3's XML).
 */
export function awsJsonError(text: string): { code: string; message: string } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as { __type?: unknown; message?: unknown; Message?: unknown };
  const code = typeof b.__type === 'string' ? b.__type.slice(b.__type.lastIndexOf('#') + 1) : '';
  const message = typeof b.message === 'string' ? b.message : typeof b.Message === 'string' ? b.Message : '';
  return { code, message };
}
