import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { env } from '../../shared/aws';
import { logger, traced } from '../../shared/powertools';
import { type EventRecord, eventOf } from '../../shared/views';

const eventBridge = traced(new EventBridgeClient({ maxAttempts: 5 }));

/** Each aggregate's events go out under its service's source. */
export const SOURCES: Readonly<Record<string, string>> = {
  Customer: 'commerce.accounts',
  Product: 'commerce.inventory',
  Reservation: 'commerce.inventory',
  Order: 'commerce.orders',
  Payment: 'commerce.payments',
};

/** The envelope's `detail`: the event and where it came from, without the stored snapshot. */
export const detailOf = (e: EventRecord) => ({
  eventId: e.eventId,
  aggregateId: e.aggregateId,
  aggregateType: e.aggregateType,
  version: e.version,
  type: e.type,
  schemaVersion: e.schemaVersion,
  occurredAt: e.occurredAt,
  ...(e.correlationId ? { correlationId: e.correlationId } : {}),
  data: e.data,
});

export function entriesOf(stream: DynamoDBStreamEvent, busName: string): PutEventsRequestEntry[] {
  return stream.Records.flatMap((record) => {
    const event = eventOf(record);
    // Stock shard events are internal bookkeeping (and the most numerous): they stay in the service.
    const source = event && SOURCES[event.aggregateType];
    if (!event || !source) return [];
    return [
      {
        EventBusName: busName,
        Source: source,
        DetailType: event.type,
        Detail: JSON.stringify(detailOf(event)),
        Time: new Date(event.occurredAt),
      },
    ];
  });
}

const BATCH = 10;
const RETRY_DELAYS_MS = [50, 200, 800];

/**
 * The outbox relay: every committed event in a table stream is put on the
 * platform's bus, at least once. Entries EventBridge refuses are retried;
 * if some still fail, the batch fails and the stream delivers it again.
 */
export const handler = async (stream: DynamoDBStreamEvent): Promise<void> => {
  const busName = env('EVENT_BUS_NAME');
  const entries = entriesOf(stream, busName);
  for (let i = 0; i < entries.length; i += BATCH) {
    let pending = entries.slice(i, i + BATCH);
    for (let attempt = 0; pending.length > 0; attempt++) {
      const result = await eventBridge.send(new PutEventsCommand({ Entries: pending }));
      if (!result.FailedEntryCount) break;
      const delay = RETRY_DELAYS_MS[attempt];
      pending = pending.filter((_, n) => result.Entries?.[n]?.ErrorCode);
      if (delay === undefined) {
        logger.error('events not published', { failed: pending.length, errors: result.Entries });
        throw new Error(`${pending.length} events could not be put on ${busName}`);
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
};
