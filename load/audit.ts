/**
 * What the event stores hold for a run, read straight from the event tables
 * (the chaos cells' own checks, beside the load report's invariants, which
 * read the API): no order charged twice, and no effect without its cause.
 */
import { DynamoDBClient, ListTablesCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { sagaReservationId } from '../functions/inventory/order-stock';
import type { Target } from './target';

/** What the run caused: its customers and products, and the orders and reservations it placed. */
export interface RunCauses {
  readonly customerIds: ReadonlySet<string>;
  readonly productIds: ReadonlySet<string>;
  /** Every order the run placed (answered, or recovered by its Idempotency-Key), with its items. */
  readonly orders: readonly { readonly orderId: string; readonly items: readonly { productId: string }[] }[];
  /** Every reservation the run made (answered, or recovered by its Idempotency-Key). */
  readonly reservationIds: ReadonlySet<string>;
}

export interface Audit {
  /** Orders with more than one capture, or more refunds than captures. */
  readonly chargedTwice: readonly string[];
  /** Effects no request of the run caused: an order, a reservation, a capture or a refund it did not place. */
  readonly withoutCause: readonly string[];
}

interface StoredEvent {
  readonly aggregateId: string;
  readonly type: string;
  readonly data?: {
    readonly orderId?: string;
    readonly customerId?: string;
    readonly productId?: string;
    readonly reservationId?: string;
  };
}

/** The reservation ids the run's requests account for: its own reservations', and its orders' stock holds. */
function reservationsCaused(causes: RunCauses): Set<string> {
  const ids = new Set(causes.reservationIds);
  for (const order of causes.orders)
    for (const item of order.items) ids.add(sagaReservationId(order.orderId, item.productId));
  return ids;
}

/** Every event of `types` in the table whose name matches `pattern` (a paged Scan). */
async function eventsOfTypes(
  dynamo: DynamoDBClient,
  tables: readonly string[],
  pattern: RegExp,
  types: string[],
) {
  const table = tables.find((name) => pattern.test(name));
  if (!table) throw new Error(`no table ${pattern} among ${tables.join(', ')}`);
  const events: StoredEvent[] = [];
  let start: Record<string, never> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: `#type IN (${types.map((_, i) => `:t${i}`).join(', ')})`,
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: Object.fromEntries(types.map((t, i) => [`:t${i}`, { S: t }])),
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) events.push(unmarshall(item) as StoredEvent);
    start = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start);
  return events;
}

/**
 * Reads the orders', inventory's and accounts' event tables and finds, for
 * the run's customers and products: an order placed that the run did not
 * place (a retry that placed a second order), a reservation it did not make
 * (one of an order it did not place, or a second one for one request), stock
 * held on a shard for neither, a capture or refund of an order it did not
 * place, and orders charged twice.
 */
export async function auditEffects(target: Target, causes: RunCauses): Promise<Audit> {
  const dynamo = new DynamoDBClient({
    endpoint: target.awsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'audit', secretAccessKey: 'audit' },
  });
  try {
    const { TableNames = [] } = await dynamo.send(new ListTablesCommand({}));
    const orderIds = new Set(causes.orders.map((o) => o.orderId));
    const withoutCause: string[] = [];
    for (const placed of await eventsOfTypes(dynamo, TableNames, /^Orders.*Events/, ['OrderPlaced'])) {
      const customerId = placed.data?.customerId;
      if (customerId && causes.customerIds.has(customerId) && !orderIds.has(placed.aggregateId))
        withoutCause.push(
          `order ${placed.aggregateId} of customer ${customerId}: no request of the run placed it`,
        );
    }
    // One scan of the inventory table for both: the reservations made, and the stock their shards hold.
    const inventory = await eventsOfTypes(dynamo, TableNames, /^Inventory.*Events/, [
      'ReservationPlaced',
      'StockReserved',
    ]);
    for (const placed of inventory.filter((e) => e.type === 'ReservationPlaced')) {
      const { productId, orderId } = placed.data ?? {};
      if (!productId || !causes.productIds.has(productId)) continue;
      if (orderId !== undefined ? !orderIds.has(orderId) : !causes.reservationIds.has(placed.aggregateId))
        withoutCause.push(
          `reservation ${placed.aggregateId} of product ${productId}${orderId ? ` for order ${orderId}` : ''}: no request of the run made it`,
        );
    }
    // Stock held on a product's shards (`<productId>#<n>`) for a reservation or an order the run never made.
    const caused = reservationsCaused(causes);
    for (const held of inventory.filter((e) => e.type === 'StockReserved')) {
      const productId = held.aggregateId.split('#')[0]!;
      const reservationId = held.data?.reservationId ?? '?';
      if (causes.productIds.has(productId) && !caused.has(reservationId))
        withoutCause.push(
          `stock held on ${held.aggregateId} for ${reservationId}: no request of the run holds it`,
        );
    }
    const counts = new Map<string, { customerId: string; captured: number; refunded: number }>();
    const payments = await eventsOfTypes(dynamo, TableNames, /^Accounts.*Events/, [
      'CreditCaptured',
      'CreditRefunded',
    ]);
    for (const payment of payments) {
      if (!causes.customerIds.has(payment.aggregateId)) continue;
      const orderId = payment.data?.orderId ?? '?';
      if (!orderIds.has(orderId))
        withoutCause.push(
          `${payment.type} of order ${orderId} (customer ${payment.aggregateId}): not an order of the run`,
        );
      const count = counts.get(orderId) ?? { customerId: payment.aggregateId, captured: 0, refunded: 0 };
      if (payment.type === 'CreditCaptured') count.captured++;
      else count.refunded++;
      counts.set(orderId, count);
    }
    const chargedTwice = [...counts]
      .filter(([, c]) => c.captured > 1 || c.refunded > c.captured)
      .map(
        ([orderId, c]) =>
          `${orderId} (customer ${c.customerId}: ${c.captured} captures, ${c.refunded} refunds)`,
      );
    return { chargedTwice, withoutCause };
  } finally {
    dynamo.destroy();
  }
}
