import type { PutEventsRequestEntry, PutEventsResponse } from '@aws-sdk/client-eventbridge';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { fromEnvironment } from '../../shared/aws';
import { EventBridge } from '../../shared/event-bridge';
import { logger, startInvocation } from '../../shared/powertools';
import { DeadlineRetries } from '../../shared/retries';
import { type EventRecord, eventOf } from '../../shared/views';
import { isIntegrationEvent, SOURCES } from '../integration-events';
import { publisherEnvironment } from '../seams';

const eventBridge = new EventBridge({ retryStrategy: new DeadlineRetries(5) });

/** The envelope's `detail`: the event and where it came from, without the stored snapshot. */
export const detailOf = (e: EventRecord) => ({
  eventId: e.eventId,
  aggregateId: e.aggregateId,
  aggregateType: e.aggregateType,
  version: e.version,
  type: e.type,
  schemaVersion: e.schemaVersion,
  occurredAt: e.occurredAt,
  // Always present: the saga reads it from the event (an event appended without one is its own thread).
  correlationId: e.correlationId ?? e.aggregateId,
  data: e.data,
});

/** A bus entry and the stream record it comes from. */
export interface Outgoing {
  readonly sequenceNumber: string;
  readonly entry: PutEventsRequestEntry;
  /** The request that caused the event, for the line that says it was published. */
  readonly correlationId?: string | undefined;
}

/**
 * The integration events of a batch, in stream order. The mapping's filter
 * already drops every other record; this check stays for what reaches the
 * relay unfiltered (a dead-letter redrive reads the stream again and invokes
 * the relay directly, scripts/redrive-dlq.ts).
 */
export function outgoingOf(stream: DynamoDBStreamEvent, busName: string): Outgoing[] {
  return stream.Records.flatMap((record) => {
    const event = eventOf(record);
    const source = event && SOURCES[event.aggregateType];
    if (!event || !source || !isIntegrationEvent(event.aggregateType, event.type)) return [];
    return [
      {
        sequenceNumber: record.dynamodb!.SequenceNumber!,
        correlationId: event.correlationId,
        entry: {
          EventBusName: busName,
          Source: source,
          DetailType: event.type,
          Detail: JSON.stringify(detailOf(event)),
          Time: new Date(event.occurredAt),
        },
      },
    ];
  });
}

export const entriesOf = (stream: DynamoDBStreamEvent, busName: string): PutEventsRequestEntry[] =>
  outgoingOf(stream, busName).map((o) => o.entry);

const BATCH = 10;
const RETRY_DELAYS_MS = [50, 200, 800];

// Read at the sandbox's first invocation, once (the relay's unit tests import this module with none set).
let eventBusName: string | undefined;

/**
 * The outbox relay: every integration event in a table stream is put on the
 * platform's bus, at least once. Entries EventBridge refuses are retried
 * (three times, backing off); an entry still refused after that ends the
 * batch, reported as a partial batch failure.
 *
 * Only the first refused record's sequence number is reported, and nothing
 * after it is put: for a stream, Lambda checkpoints before the lowest
 * sequence number reported and delivers the shard again from that record on
 * (every later record of the batch included, whatever was reported for them),
 * so reporting later ones would add nothing, and putting them now would only
 * put them twice, after the refused one and out of its order. Records before
 * it are done and are not delivered again. Entries of the same chunk after
 * the refused one that EventBridge did accept are put again on the retry: at
 * least once, as every consumer of the bus expects.
 */
export const handler = async (
  stream: DynamoDBStreamEvent,
  context?: Context,
): Promise<DynamoDBBatchResponse> => {
  startInvocation(context);
  eventBusName ??= fromEnvironment(publisherEnvironment).eventBusName;
  return publish(outgoingOf(stream, eventBusName), (entries) => eventBridge.putEvents({ Entries: entries }));
};

/** A line per event put on the bus, with its request's correlation id (`npm run logs -- -c ID` follows it). */
const logPublished = ({ entry, correlationId }: Outgoing) =>
  logger.info('event published', { type: entry.DetailType, correlationId });

/** The relay's loop, with the `PutEvents` call (and the retry delays) given: see `handler`. */
export async function publish(
  outgoing: readonly Outgoing[],
  putEvents: (entries: PutEventsRequestEntry[]) => Promise<PutEventsResponse>,
  retryDelaysMs: readonly number[] = RETRY_DELAYS_MS,
): Promise<DynamoDBBatchResponse> {
  for (let i = 0; i < outgoing.length; i += BATCH) {
    let pending = outgoing.slice(i, i + BATCH);
    for (let attempt = 0; pending.length > 0; attempt++) {
      let result: PutEventsResponse;
      try {
        result = await putEvents(pending.map((o) => o.entry));
      } catch (error) {
        // The SDK has retried already (DeadlineRetries): the records before this chunk's first pending one are done.
        logger.error('events not published', { failed: pending.length, error: error as Error });
        return { batchItemFailures: [{ itemIdentifier: pending[0]!.sequenceNumber }] };
      }
      const refused = pending.filter((_, n) => result.Entries?.[n]?.ErrorCode);
      for (const published of pending.filter((o) => !refused.includes(o))) logPublished(published);
      if (refused.length === 0) break;
      const delay = retryDelaysMs[attempt];
      if (delay === undefined) {
        const errors = result.Entries?.filter((e) => e.ErrorCode);
        logger.error('events not published', { failed: refused.length, errors });
        return { batchItemFailures: [{ itemIdentifier: refused[0]!.sequenceNumber }] };
      }
      pending = refused;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  return { batchItemFailures: [] };
}
