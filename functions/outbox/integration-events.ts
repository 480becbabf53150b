/**
 * The integration events: the domain events that leave their service on the
 * platform's EventBridge bus. An event goes on the bus only when some rule
 * subscribes to it; every other event stays in its service's table (its
 * stream feeds that service's own projector). To publish another event, add
 * it here together with the rule that consumes it: the outbox relay's stream
 * mappings filter on this list (Lambda `FilterCriteria`, so the relay is not
 * even invoked for the rest), a table holding none of these events gets no
 * relay mapping at all, and test/infra checks that this list and the bus's
 * rules name the same events.
 *
 * No import here: the CDK app (lib/services/outbox.ts), the relay and the
 * tests all read this one list.
 */

export interface IntegrationEvent {
  /** The aggregate type the event store writes on the event item (`aggregateType`). */
  readonly aggregateType: string;
  /** The event's type (`type` on the item; the bus's `detail-type`). */
  readonly type: string;
}

export const INTEGRATION_EVENTS: readonly IntegrationEvent[] = [
  // Starts the order saga (rule StartOnOrderPlaced, lib/services/saga.ts).
  { aggregateType: 'Order', type: 'OrderPlaced' },
];

/** Each aggregate's events go on the bus under its service's source. */
export const SOURCES: Readonly<Record<string, string>> = {
  Customer: 'commerce.accounts',
  Product: 'commerce.inventory',
  Reservation: 'commerce.inventory',
  Order: 'commerce.orders',
  Payment: 'commerce.payments',
};

export const isIntegrationEvent = (aggregateType: string, type: string): boolean =>
  INTEGRATION_EVENTS.some((e) => e.aggregateType === aggregateType && e.type === type);

/**
 * Lambda filter patterns (the EventBridge pattern syntax applied to the
 * stream record, whose `dynamodb.NewImage` is in DynamoDB JSON) that let
 * through the inserts of these events: one pattern per aggregate type, a
 * record passing if it matches any. An empty list means none of `events`.
 */
export function streamFilterPatterns(events: readonly IntegrationEvent[]): Record<string, unknown>[] {
  const typesByAggregate = new Map<string, string[]>();
  for (const { aggregateType, type } of events) {
    const types = typesByAggregate.get(aggregateType) ?? [];
    if (!types.includes(type)) types.push(type);
    typesByAggregate.set(aggregateType, types);
  }
  return [...typesByAggregate].map(([aggregateType, types]) => ({
    eventName: ['INSERT'],
    dynamodb: { NewImage: { aggregateType: { S: [aggregateType] }, type: { S: types } } },
  }));
}
