import { marshall } from '@aws-sdk/util-dynamodb';

let sequence = 100;

/** An event item as the event store writes it (the folded state left out). */
export const eventItem = (aggregateType: string, type: string, version = 1) => ({
  aggregateId: `${aggregateType.toLowerCase()}_1`,
  version,
  aggregateType,
  type,
  schemaVersion: 1,
  eventId: `evt_${aggregateType}_${type}_${version}`,
  occurredAt: '2026-01-01T00:00:00.000Z',
  correlationId: 'corr-1',
  data: { total: 1250, items: [{ sku: 'W-1', quantity: 2 }] },
});

/** A DynamoDB stream record as Lambda delivers it (NEW_IMAGE), `NewImage` in DynamoDB JSON. */
export function streamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  item: Record<string, unknown>,
): Record<string, unknown> & { dynamodb: Record<string, unknown> & { SequenceNumber: string } } {
  const SequenceNumber = String(sequence++).padStart(21, '0');
  return {
    eventID: `e${SequenceNumber}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'eu-west-1',
    dynamodb: {
      ApproximateCreationDateTime: 1767225600,
      Keys: marshall({ aggregateId: item.aggregateId, version: item.version }),
      ...(eventName === 'REMOVE' ? {} : { NewImage: marshall(item, { removeUndefinedValues: true }) }),
      SequenceNumber,
      SizeBytes: 400,
      StreamViewType: 'NEW_IMAGE',
    },
    eventSourceARN:
      'arn:aws:dynamodb:us-east-1:000000000000:table/OrdersEvents/stream/2026-01-01T00:00:00.000',
  };
}

/** Records the relay's filter must let through, and records it must drop. */
export const FILTER_CASES: readonly { name: string; record: Record<string, unknown>; passes: boolean }[] = [
  {
    name: 'an inserted OrderPlaced',
    record: streamRecord('INSERT', eventItem('Order', 'OrderPlaced')),
    passes: true,
  },
  {
    name: 'another Order event',
    record: streamRecord('INSERT', eventItem('Order', 'OrderConfirmed', 3)),
    passes: false,
  },
  {
    name: 'an OrderPlaced of another aggregate type',
    record: streamRecord('INSERT', eventItem('Payment', 'OrderPlaced')),
    passes: false,
  },
  {
    name: 'a Customer event',
    record: streamRecord('INSERT', eventItem('Customer', 'CustomerRegistered')),
    passes: false,
  },
  {
    name: 'a stock shard event',
    record: streamRecord('INSERT', eventItem('StockShard', 'StockReserved', 7)),
    passes: false,
  },
  {
    name: 'a modified OrderPlaced item',
    record: streamRecord('MODIFY', eventItem('Order', 'OrderPlaced')),
    passes: false,
  },
  {
    name: 'a removed item',
    record: streamRecord('REMOVE', eventItem('Order', 'OrderPlaced')),
    passes: false,
  },
  {
    name: 'an item without a type (not an event)',
    record: streamRecord('INSERT', { aggregateId: 'cursor', version: 0, aggregateType: 'Order' }),
    passes: false,
  },
];
