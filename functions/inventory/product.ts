import { accept, type Decider, isRejection, reject } from '../shared/decider';
import type { DomainEvent, Fold } from '../shared/events';
import { type ShardEvents, splitEvenly } from './shard';

// A product: created once with its shard count, restocked over its shards (see domain.ts).

export interface Product {
  readonly productId: string;
  readonly sku: string;
  readonly name: string;
  readonly priceCents: number;
  readonly shardCount: number;
  readonly createdAt: string;
}

export type ProductState = Product | null;

export type ProductEvent =
  | DomainEvent<
      'ProductCreated',
      {
        productId: string;
        sku: string;
        name: string;
        priceCents: number;
        initialStock: number;
        shardCount: number;
        createdAt: string;
      }
    >
  | DomainEvent<'ProductRestocked', { productId: string; quantity: number; perShard: number[] }>;

const productFold: Fold<ProductState, ProductEvent> = {
  foldVersion: 1,
  initial: null,
  evolve(state, event) {
    switch (event.type) {
      case 'ProductCreated': {
        const { productId, sku, name, priceCents, shardCount, createdAt } = event.data;
        return { productId, sku, name, priceCents, shardCount, createdAt };
      }
      case 'ProductRestocked':
        return state;
    }
  },
};

export type ProductCommand =
  | {
      readonly type: 'Create';
      readonly productId: string;
      readonly sku: string;
      readonly name: string;
      readonly priceCents: number;
      readonly stock: number;
      readonly shardCount: number;
      readonly now: Date;
    }
  | { readonly type: 'Restock'; readonly quantity: number };

export type ProductRejection = { readonly code: 'ALREADY_CREATED' } | { readonly code: 'NO_SUCH_PRODUCT' };

/** The product: created once, with its shard count fixed; restocked any number of times, spread evenly over its shards. */
export const productDecider: Decider<ProductCommand, ProductState, ProductEvent, ProductRejection> = {
  ...productFold,
  decide(command, state) {
    if (command.type === 'Create') {
      if (state) return reject({ code: 'ALREADY_CREATED' });
      return accept<ProductEvent>({
        type: 'ProductCreated',
        schemaVersion: 1,
        data: {
          productId: command.productId,
          sku: command.sku,
          name: command.name,
          priceCents: command.priceCents,
          initialStock: command.stock,
          shardCount: command.shardCount,
          createdAt: command.now.toISOString(),
        },
      });
    }
    if (!state) return reject({ code: 'NO_SUCH_PRODUCT' });
    const { productId, shardCount } = state;
    const perShard = splitEvenly(command.quantity, shardCount);
    return accept<ProductEvent>({
      type: 'ProductRestocked',
      schemaVersion: 1,
      data: { productId, quantity: command.quantity, perShard },
    });
  },
};

/** A product's events, with the stock they put on its shards. */
export interface ProductDecision {
  readonly product: readonly ProductEvent[];
  readonly shards: ShardEvents[];
}

/**
 * Decides on a product and the stock that puts on its shards: at creation
 * every shard receives its even share (an empty share too, so that every
 * shard exists from the start); at a restock, only the shards whose share
 * has units. Written in one transaction.
 */
export function decideProduct(
  command: ProductCommand,
  state: ProductState,
): ProductDecision | { readonly rejection: ProductRejection } {
  const decision = productDecider.decide(command, state);
  if (isRejection(decision)) return decision;
  const [event] = decision.events;
  const shares =
    event?.type === 'ProductCreated'
      ? splitEvenly(event.data.initialStock, event.data.shardCount)
      : event?.type === 'ProductRestocked'
        ? event.data.perShard
        : [];
  const created = event?.type === 'ProductCreated';
  return {
    product: decision.events,
    shards: shares.flatMap((quantity, shard): ShardEvents[] =>
      created || quantity > 0
        ? [{ shard, events: [{ type: 'StockReceived', schemaVersion: 1, data: { quantity } }] }]
        : [],
    ),
  };
}

/**
 * How many shards a product's stock is spread over, fixed at creation: one
 * per `unitsPerShard` units of initial stock, at least one, at most
 * `maxShards`. A product with little stock keeps one shard (every read is
 * one item); a flash-sale product of 80,000 units gets 64 partition keys.
 */
export const shardCountFor = (stock: number, policy: { unitsPerShard: number; maxShards: number }) =>
  Math.max(1, Math.min(policy.maxShards, Math.ceil(stock / policy.unitsPerShard)));
