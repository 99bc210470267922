/**
 * Stands in for `@smithy/core/event-streams` in the Lambda bundles of a stack that embeds locally
 * (an esbuild alias in lib/service-function.ts). The DynamoDB, SQS and Cognito operations this
 * service calls have no event-stream members, so the SDK's protocol layer never loads the real
 * module (it imports it lazily, only for such operations), yet esbuild bundles its ~15 KB all the
 * same. The names other SDK packages import from it are here so the bundles link; the Bedrock
 * client, the only importer that would call them, is compiled out of such stacks (the synth test
 * checks). Should anything call one, it fails with this message instead of misbehaving.
 */
function unavailable(): never {
  throw new Error('Event-stream operations are not bundled in this function (see shared/aws/no-event-streams.ts).');
}

export const eventStreamSerdeProvider = unavailable;
export const resolveEventStreamSerdeConfig = unavailable;
export const iterableToReadableStream = unavailable;
export const readableStreamToIterable = unavailable;

export class EventStreamSerde {
  constructor() {
    unavailable();
  }
}

export class EventStreamCodec {
  constructor() {
    unavailable();
  }
}
