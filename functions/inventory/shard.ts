import type { DomainEvent, Fold } from '../shared/events';

// A stock shard: one of the aggregates a product's stock is spread over (see domain.ts).

export interface Stock {
  readonly available: number;
  readonly reserved: number;
  readonly sold: number;
  readonly received: number;
}

/** A stock shard as some step last wrote it, handed to a later step so that it need not read it again. */
export interface KnownShard {
  readonly productId: string;
  readonly shard: number;
  readonly state: Stock;
  readonly version: number;
}
export const NO_STOCK: Stock = { available: 0, reserved: 0, sold: 0, received: 0 };

export type ShardEvent =
  | DomainEvent<'StockReceived', { quantity: number }>
  | DomainEvent<'StockReserved', { reservationId: string; quantity: number }>
  | DomainEvent<'StockReleased', { reservationId: string; quantity: number }>
  | DomainEvent<'StockSold', { reservationId: string; quantity: number }>;

export const shardFold: Fold<Stock, ShardEvent> = {
  foldVersion: 1,
  initial: NO_STOCK,
  evolve(s, event) {
    const q = event.data.quantity;
    switch (event.type) {
      case 'StockReceived':
        return { ...s, available: s.available + q, received: s.received + q };
      case 'StockReserved':
        return { ...s, available: s.available - q, reserved: s.reserved + q };
      case 'StockReleased':
        return { ...s, available: s.available + q, reserved: s.reserved - q };
      case 'StockSold':
        return { ...s, reserved: s.reserved - q, sold: s.sold + q };
    }
  },
};

export const shardId = (productId: string, index: number) => `${productId}#${index}`;

export const sumStock = (shards: readonly Stock[]): Stock =>
  shards.reduce(
    (t, s) => ({
      available: t.available + s.available,
      reserved: t.reserved + s.reserved,
      sold: t.sold + s.sold,
      received: t.received + s.received,
    }),
    NO_STOCK,
  );

/** Splits `quantity` over `shards` as evenly as whole units allow. */
export function splitEvenly(quantity: number, shards: number): number[] {
  const base = Math.floor(quantity / shards);
  const extra = quantity % shards;
  return Array.from({ length: shards }, (_, i) => base + (i < extra ? 1 : 0));
}

/** Events for one shard of a product, decided with an event of another aggregate. */
export interface ShardEvents {
  readonly shard: number;
  readonly events: ShardEvent[];
}
