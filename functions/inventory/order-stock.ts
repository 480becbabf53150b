import { createHash } from 'node:crypto';
import { type AppendMeta, TRANSACTION_ITEM_LIMIT } from '../shared/event-store';
import type { KnownShard, ReservationPart, ShardEvents } from './domain';
import { isShortfall, type StockPlanning } from './stock-planning';
import type { InventoryStores, ShardAppend } from './store';

/**
 * The inventory as the order saga uses it: an order's stock planned (nothing
 * written), the writes that sell it or give it back, and the transaction that
 * writes them with the saga's other appends (`append`), keeping this
 * sandbox's knowledge of the shards up to date. The saga writes these with
 * the order's own events; `inventoryCommands` (application.ts) exposes them.
 */
export interface OrderStock {
  readonly planOrderStock: ReturnType<typeof orderStockPlanning>['planOrderStock'];
  readonly heldStockAppends: ReturnType<typeof orderStockPlanning>['heldStockAppends'];
  readonly append: InventoryStores['append'];
}

/** What `append`ed shard appends leave their shards as. */
export const shardsAfter = (appends: readonly ShardAppend[]): KnownShard[] =>
  appends.map((a) => ({ productId: a.productId, shard: a.shard, ...a.after }));

/** Planning an order's stock, and the shard appends that sell it or give it back, on the inventory's stores. */
export function orderStockPlanning(
  { loadProduct, loadShards, shardAppends }: InventoryStores,
  planning: StockPlanning,
) {
  /**
   * Plans the stock of every item of an order, all or nothing: from one
   * shard that has an item's whole quantity (a random one, read), else
   * spread over shards.
   * Nothing is written: the saga appends these shard events in one
   * transaction with the order's own event, which records what it holds.
   */
  async function planOrderStock(
    orderId: string,
    items: readonly { productId: string; quantity: number }[],
    meta: AppendMeta,
  ): Promise<{ parts: ReservationPart[][]; appends: ShardAppend[] } | { outOfStock: string[] }> {
    // The items' reads are sent together: in a row, each would add its round trip to the saga's step.
    const plans = await Promise.all(
      items.map(async (item) => {
        const product = await loadProduct(item.productId);
        const knownShort = product && planning.knownShortfall(product, item.quantity) !== undefined;
        return product && !knownShort ? planning.quickly(product, item.quantity) : undefined;
      }),
    );
    const parts: ReservationPart[][] = [];
    const appends: ShardAppend[] = [];
    const outOfStock: string[] = [];
    for (const [n, item] of items.entries()) {
      const planned = plans[n];
      if (!planned || isShortfall(planned)) {
        outOfStock.push(item.productId);
        continue;
      }
      parts.push(planned.parts);
      const reservationId = sagaReservationId(orderId, item.productId);
      appends.push(
        ...shardAppends(
          item.productId,
          shardEvents('StockReserved', reservationId, planned.parts),
          planned.loaded,
          meta,
        ),
      );
    }
    if (outOfStock.length > 0) return { outOfStock };
    // Confirming or cancelling writes these shards again in one transaction with the order's event (and,
    // cancelling, the payment and the customer's credit); an order whose stock is spread over more shards
    // than that transaction holds cannot be taken whole, so its spread items count as out of stock.
    if (appends.length + ORDER_TRANSACTION_EXTRA_ITEMS > TRANSACTION_ITEM_LIMIT) {
      return { outOfStock: items.filter((_, n) => parts[n]!.length > 1).map((item) => item.productId) };
    }
    return { parts, appends };
  }

  /**
   * The shard appends that turn an order's held stock (`parts`, item by item)
   * into sold stock (`StockSold`) or give it back (`StockReleased`), to be
   * written in one transaction with the order's confirmation or cancellation.
   */
  async function heldStockAppends(
    type: 'StockSold' | 'StockReleased',
    order: { orderId: string; items: readonly { productId: string }[] },
    parts: readonly (readonly ReservationPart[])[],
    meta: AppendMeta,
    /** Shards as the caller last saw them (e.g. the reserving step wrote them): not read again. */
    known: readonly KnownShard[] = [],
  ): Promise<ShardAppend[]> {
    const appends: ShardAppend[] = [];
    for (const [i, { productId }] of order.items.entries()) {
      const held = parts[i] ?? [];
      const seen = new Map(
        known
          .filter((k) => k.productId === productId)
          .map((k) => [k.shard, { state: k.state, version: k.version }]),
      );
      const unseen = held.map((p) => p.shard).filter((shard) => !seen.has(shard));
      const loaded = new Map([...seen, ...(unseen.length > 0 ? await loadShards(productId, unseen) : [])]);
      const events = shardEvents(type, sagaReservationId(order.orderId, productId), held);
      appends.push(...shardAppends(productId, events, loaded, meta));
    }
    return appends;
  }

  return { planOrderStock, heldStockAppends };
}

/** The most an order's own transactions write besides its shards: cancelling, its event, the payment and the credit. */
const ORDER_TRANSACTION_EXTRA_ITEMS = 3;

/** One event of `type` per part, on the part's shard. */
const shardEvents = (
  type: 'StockReserved' | 'StockSold' | 'StockReleased',
  reservationId: string,
  parts: readonly ReservationPart[],
): ShardEvents[] =>
  parts.map((p) => ({
    shard: p.shard,
    events: [{ type, schemaVersion: 1, data: { reservationId, quantity: p.quantity } }],
  }));

/** The id the shards' events carry for one product of one order: the same on every retry. */
export const sagaReservationId = (orderId: string, productId: string) =>
  `res_${createHash('sha256').update(`${orderId}/${productId}`).digest('hex').slice(0, 32)}`;
