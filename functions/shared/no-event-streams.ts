/**
 * What the bundles get for `@smithy/core/event-streams` (the construct's
 * esbuild alias, lib/constructs/service-function.ts). The SDK's HTTP
 * protocol imports it dynamically, and only for an operation with an event
 * stream (`loadEventStreamCapability`); esbuild bundles a dynamic import all
 * the same, about 20 KB of every minified bundle with the checksums it
 * brings. No operation the functions call has one: DynamoDB, DynamoDB
 * Streams, EventBridge and Step Functions stream nothing. Should one ever
 * be called, it fails here, saying why, rather than on a missing module.
 */
const notBundled = (): never => {
  throw new Error('event streams are not bundled (functions/shared/no-event-streams.ts)');
};

export const eventStreamSerdeProvider = notBundled;

export class EventStreamSerde {
  constructor() {
    notBundled();
  }
}
