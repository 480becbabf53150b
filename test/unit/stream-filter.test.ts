import type { PutEventsRequestEntry, PutEventsResponse } from '@aws-sdk/client-eventbridge';
import { filterPatterns, passesFilters } from '@commerce/local-cloud';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { outgoingOf, publish } from '../../functions/outbox/handlers/publisher';
import { INTEGRATION_EVENTS, streamFilterPatterns } from '../../functions/outbox/integration-events';
import { logger } from '../../functions/shared/powertools';
import { eventItem, FILTER_CASES, streamRecord } from '../support/stream-records';

const relayFilters = streamFilterPatterns(INTEGRATION_EVENTS);

describe('the outbox relay’s stream filter', () => {
  test('is one pattern per aggregate type of the integration events', () => {
    expect(relayFilters).toEqual([
      {
        eventName: ['INSERT'],
        dynamodb: { NewImage: { aggregateType: { S: ['Order'] }, type: { S: ['OrderPlaced'] } } },
      },
    ]);
    expect(
      streamFilterPatterns([
        { aggregateType: 'Order', type: 'OrderPlaced' },
        { aggregateType: 'Payment', type: 'PaymentRefunded' },
        { aggregateType: 'Order', type: 'OrderCancelled' },
      ]),
    ).toEqual([
      {
        eventName: ['INSERT'],
        dynamodb: {
          NewImage: { aggregateType: { S: ['Order'] }, type: { S: ['OrderPlaced', 'OrderCancelled'] } },
        },
      },
      {
        eventName: ['INSERT'],
        dynamodb: { NewImage: { aggregateType: { S: ['Payment'] }, type: { S: ['PaymentRefunded'] } } },
      },
    ]);
  });

  test.each(FILTER_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(passesFilters(relayFilters, c.record)).toBe(c.passes);
  });

  test('no filter lets every record through', () => {
    for (const { record } of FILTER_CASES) expect(passesFilters([], record)).toBe(true);
  });

  test('a record passes if it matches any filter', () => {
    const customer = streamRecord('INSERT', eventItem('Customer', 'CustomerRegistered'));
    expect(passesFilters([...relayFilters, { eventName: ['INSERT'] }], customer)).toBe(true);
  });

  test('FilterCriteria are read from the template’s JSON strings, and a bad pattern is refused', () => {
    const criteria = { Filters: relayFilters.map((p) => ({ Pattern: JSON.stringify(p) })) };
    expect(filterPatterns(criteria, 'M')).toEqual(relayFilters);
    expect(filterPatterns(undefined, 'M')).toEqual([]);
    expect(() => filterPatterns({ Filters: [{ Pattern: '{"eventName":"INSERT"}' }] }, 'M')).toThrow(
      /event source mapping M: filter 0/,
    );
  });

  test('the relay itself puts only integration events (a redrive invokes it unfiltered)', () => {
    const stream = { Records: FILTER_CASES.map((c) => c.record) } as unknown as DynamoDBStreamEvent;
    const outgoing = outgoingOf(stream, 'bus');
    expect(outgoing.map((o) => [o.entry.Source, o.entry.DetailType])).toEqual([
      ['commerce.orders', 'OrderPlaced'],
    ]);
  });
});

describe('the outbox relay’s partial batch failures', () => {
  // Each event put is an INFO line; kept off the test's output, and read where a test asks.
  let info: jest.SpyInstance;
  beforeEach(() => {
    info = jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  });
  afterEach(() => info.mockRestore());
  const placed = (n: number) =>
    Array.from({ length: n }, (_, i) => streamRecord('INSERT', eventItem('Order', 'OrderPlaced', i + 1)));
  const outgoing = (n: number) =>
    outgoingOf({ Records: placed(n) } as unknown as DynamoDBStreamEvent, 'bus').map((o, i) => ({
      ...o,
      entry: { ...o.entry, Detail: JSON.stringify({ n: i }) },
    }));
  const nth = (entry: PutEventsRequestEntry) => (JSON.parse(entry.Detail!) as { n: number }).n;

  /** A PutEvents that refuses the entries `refuse` says, and records every call. */
  const bus = (refuse: (n: number, call: number) => boolean) => {
    const calls: number[][] = [];
    const putEvents = async (entries: PutEventsRequestEntry[]): Promise<PutEventsResponse> => {
      calls.push(entries.map(nth));
      const results = entries.map((e) =>
        refuse(nth(e), calls.length) ? { ErrorCode: 'InternalFailure' } : { EventId: `id-${nth(e)}` },
      );
      return {
        FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length,
        Entries: results,
      };
    };
    return { calls, putEvents };
  };

  test('everything accepted: no failure, in chunks of 10', async () => {
    const { calls, putEvents } = bus(() => false);
    await expect(publish(outgoing(25), putEvents, [0, 0, 0])).resolves.toEqual({ batchItemFailures: [] });
    expect(calls.map((c) => c.length)).toEqual([10, 10, 5]);
  });

  test('an entry refused once is retried alone and the batch succeeds', async () => {
    const { calls, putEvents } = bus((n, call) => n === 3 && call === 1);
    await expect(publish(outgoing(5), putEvents, [0, 0, 0])).resolves.toEqual({ batchItemFailures: [] });
    expect(calls).toEqual([[0, 1, 2, 3, 4], [3]]);
  });

  test('an entry still refused after the retries is reported, and nothing after it is put', async () => {
    const records = outgoing(25);
    const { calls, putEvents } = bus((n) => n === 13 || n === 16);
    const result = await publish(records, putEvents, [0, 0, 0]);
    // Lambda resumes the shard at the lowest reported sequence number: 13 and everything after it.
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: records[13]!.sequenceNumber }] });
    expect(calls).toEqual([
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
      [13, 16],
      [13, 16],
      [13, 16],
    ]);
  });

  test('each event put on the bus is logged once, with its request’s correlation id, when EventBridge takes it', async () => {
    const records = outgoing(4).map((o, i) => ({ ...o, correlationId: `corr-${i}` }));
    // Entry 2 refused on the first call, taken on the retry.
    const { putEvents } = bus((n, call) => n === 2 && call === 1);
    await publish(records, putEvents, [0, 0, 0]);
    const published = info.mock.calls.filter(([message]) => message === 'event published');
    expect(published.map(([, keys]) => (keys as { correlationId: string }).correlationId)).toEqual([
      'corr-0',
      'corr-1',
      'corr-3',
      'corr-2',
    ]);
  });

  test('a PutEvents that throws (after the SDK’s retries) reports its chunk’s first record', async () => {
    const records = outgoing(15);
    let call = 0;
    const result = await publish(
      records,
      async (entries) => {
        if (++call === 2) throw new Error('socket hang up');
        return { $metadata: {}, FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: 'x' })) };
      },
      [0, 0, 0],
    );
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: records[10]!.sequenceNumber }] });
  });
});
