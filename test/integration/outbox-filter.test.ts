import {
  createCustomer,
  createProduct,
  eventually,
  localAdmin,
  placeAndSettle,
  post,
  quiescentWrites,
} from '../support/api';

interface MappingStats {
  records: number;
  batches: number;
  failedToDestination: number;
  filtered: number;
}
interface Stats {
  streams: Record<string, MappingStats>;
  eventBridge: { events: number; unmatched: number; byType: Record<string, number> };
}

const ORDER_PLACED = 'commerce.orders OrderPlaced';

/**
 * The counters once the cloud is quiescent (no mapping gathering or delivering records: the relay's
 * batching window, 1 s, is longer than the pause between two reads below, so an earlier test's
 * OrderPlaced could otherwise be gathered still, and put on the bus after `before`) and nothing has
 * moved on the bus or the relay's mapping for a while.
 */
async function quietStats(relay: string): Promise<Stats> {
  await quiescentWrites();
  // Events put, not deliveries: the scheduled rules (the sweepers) deliver every 500 ms in the suite.
  const key = (s: Stats) =>
    JSON.stringify([s.eventBridge.events, s.eventBridge.byType, s.eventBridge.unmatched, s.streams[relay]]);
  let last = await localAdmin<Stats>('stats');
  const deadline = Date.now() + 20_000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 750));
    const next = await localAdmin<Stats>('stats');
    if (key(next) === key(last) || Date.now() > deadline) return next;
    last = next;
  }
}

describe('the outbox publishes only integration events', () => {
  let relay: string;
  beforeAll(async () => {
    const { eventSourceMappings } = await localAdmin<{ eventSourceMappings: string[] }>('wiring');
    const relays = eventSourceMappings.filter((id) => id.startsWith('OutboxPublisher'));
    // Only the orders table holds an integration event (OrderPlaced): the other tables' streams never invoke the relay.
    expect(relays).toHaveLength(1);
    expect(relays[0]).toMatch(/OrdersEvents/);
    relay = relays[0]!;
  });

  test('filtered events never reach the bus and integration events always do', async () => {
    const before = await quietStats(relay);

    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ stock: 10, priceCents: 1000 });
    const reservation = await post(`/products/${product.productId}/reservations`, { quantity: 1 });
    expect(reservation.status).toBe(201);
    const orders = [];
    for (let i = 0; i < 3; i++) {
      orders.push(await placeAndSettle(customer.customerId, [{ productId: product.productId, quantity: 1 }]));
    }
    expect(orders.map((o) => o.status)).toEqual(['CONFIRMED', 'CONFIRMED', 'CONFIRMED']);

    // One OrderPlaced per order reaches the bus (the stream is the guarantee, whatever the request did).
    await eventually(
      () => localAdmin<Stats>('stats'),
      (s) => (s.eventBridge.byType[ORDER_PLACED] ?? 0) - (before.eventBridge.byType[ORDER_PLACED] ?? 0) >= 3,
      20_000,
    );
    const after = await quietStats(relay);

    const delta = (s: Stats) => s.eventBridge.byType;
    const putByType = Object.fromEntries(
      Object.entries(delta(after))
        .map(([type, n]) => [type, n - (delta(before)[type] ?? 0)] as const)
        .filter(([, n]) => n !== 0),
    );
    // Nothing but OrderPlaced was put: not the customer's, the product's, the reservation's, the stock
    // shards', the payments' events, nor the orders' later events (confirmed, …).
    expect(putByType).toEqual({ [ORDER_PLACED]: 3 });
    expect(after.eventBridge.events - before.eventBridge.events).toBe(3);
    expect(after.eventBridge.unmatched - before.eventBridge.unmatched).toBe(0);

    // The relay was given the three OrderPlaced records only; the orders table's other records were
    // dropped by the mapping's filter, and nothing failed.
    const relayBefore = before.streams[relay]!;
    const relayAfter = after.streams[relay]!;
    expect(relayAfter.records - relayBefore.records).toBe(3);
    expect(relayAfter.filtered - relayBefore.filtered).toBeGreaterThanOrEqual(3);
    expect(relayAfter.failedToDestination - relayBefore.failedToDestination).toBe(0);
  }, 120_000);

  test("the relay's records are gathered over the mapping's batching window, not delivered one by one", async () => {
    const { mappingBatching } = await localAdmin<{
      mappingBatching: Record<string, { batchSize: number; batchingWindowMs: number }>;
    }>('wiring');
    // The stage's streamBatchingWindow, as the template's MaximumBatchingWindowInSeconds says it.
    expect(mappingBatching[relay]).toEqual({ batchSize: 100, batchingWindowMs: 1000 });
    const customer = await createCustomer({ creditLimitCents: 100_000 });
    const product = await createProduct({ stock: 10, priceCents: 1000 });
    const before = await quietStats(relay);
    // Five orders 100 ms apart: all inside one window that opens at the first one's write.
    for (let i = 0; i < 5; i++) {
      const placed = await post('/orders', {
        customerId: customer.customerId,
        items: [{ productId: product.productId, quantity: 1 }],
      });
      expect(placed.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const after = await quietStats(relay);
    expect(after.streams[relay]!.records - before.streams[relay]!.records).toBe(5);
    // One batch (two if a poll of an earlier write fell at the very start): never one per order.
    expect(after.streams[relay]!.batches - before.streams[relay]!.batches).toBeLessThanOrEqual(2);
  }, 120_000);
});
