// The per-sandbox stock cache: what it refuses early, which shards it offers,
// what it answers GET with, and for how long; time is passed in.
import type { Stock } from '../../functions/inventory/domain';
import { StockCache } from '../../functions/inventory/stock-cache';

const P = 'prd_0123456789abcdef0123456789abcdef';
const T = 1_000_000;
const settings = {
  confirmMs: 1000,
  readMs: 500,
  maxProducts: 3,
};
const stock = (available: number, reserved = 0, sold = 0): Stock => ({
  available,
  reserved,
  sold,
  received: available + reserved + sold,
});

/** A cache where every one of `shards` was read from the event store at `T` with `available[i]`. */
function confirmed(available: number[]) {
  const cache = new StockCache(settings);
  available.forEach((a, i) => {
    cache.remember(P, i, stock(a, 10 - a), 5, T, 'store');
  });
  return cache;
}

describe('early refusal (shortfall)', () => {
  test('refuses when every shard was confirmed within the bound and together they are short', () => {
    const cache = confirmed([0, 1, 0]);
    expect(cache.shortfall(P, 3, 2, T + 999)).toBe(1);
    expect(cache.shortfall(P, 3, 1, T + 999)).toBeUndefined();
  });

  test('stops refusing once the bound has passed since the confirmation', () => {
    const cache = confirmed([0, 0]);
    expect(cache.shortfall(P, 2, 1, T + 999)).toBe(0);
    expect(cache.shortfall(P, 2, 1, T + 1000)).toBeUndefined();
  });

  test('never refuses while some shard is unknown', () => {
    const cache = confirmed([0, 0]);
    expect(cache.shortfall(P, 3, 1, T)).toBeUndefined();
    expect(new StockCache(settings).shortfall(P, 1, 1, T)).toBeUndefined();
  });

  test('a newer version seen only in the read model stops the refusal until the event store confirms it', () => {
    const cache = confirmed([0, 0]);
    cache.remember(P, 1, stock(4, 6), 6, T + 10, 'view');
    expect(cache.shortfall(P, 2, 1, T + 20)).toBeUndefined();
    cache.remember(P, 1, stock(0, 10), 7, T + 30, 'store');
    expect(cache.shortfall(P, 2, 1, T + 40)).toBe(0);
  });

  test('an own append (a release, a restock) that gives stock back is seen at once', () => {
    const cache = confirmed([0, 0]);
    cache.remember(P, 0, stock(3, 7), 6, T + 5, 'store');
    expect(cache.shortfall(P, 2, 1, T + 6)).toBeUndefined();
    expect(cache.shortfall(P, 2, 4, T + 6)).toBe(3);
  });

  test('a lost race on a shard puts it in doubt: no refusal until it is read again', () => {
    const cache = confirmed([0, 0]);
    cache.doubt(P, 0);
    expect(cache.shortfall(P, 2, 1, T + 1)).toBeUndefined();
    cache.remember(P, 0, stock(0, 10), 5, T + 2, 'store');
    expect(cache.shortfall(P, 2, 1, T + 3)).toBe(0);
  });
});

describe('versions only move forward', () => {
  test('an older version read late changes nothing', () => {
    const cache = new StockCache(settings);
    cache.remember(P, 0, stock(2, 8), 9, T, 'store');
    cache.remember(P, 0, stock(5, 5), 4, T + 100, 'view');
    cache.remember(P, 0, stock(5, 5), 4, T + 100, 'store');
    expect(cache.newest(P, 0)).toMatchObject({ stock: stock(2, 8), version: 9 });
    // Nor does it refresh the confirmation of the newer version.
    expect(cache.shortfall(P, 1, 3, T + 1050)).toBeUndefined();
  });

  test('the same version seen again refreshes when it was seen and confirmed', () => {
    const cache = new StockCache(settings);
    cache.remember(P, 0, stock(0, 10), 9, T, 'store');
    cache.remember(P, 0, stock(0, 10), 9, T + 900, 'view');
    expect(cache.shortfall(P, 1, 1, T + 1100)).toBeUndefined();
    expect(cache.stock(P, 1, T + 1100)).toEqual(stock(0, 10));
    cache.remember(P, 0, stock(0, 10), 9, T + 900, 'store');
    expect(cache.shortfall(P, 1, 1, T + 1100)).toBe(0);
  });
});

describe('candidates for a one-shard reservation', () => {
  test('leaves out shards confirmed short of the quantity, and only while the bound holds', () => {
    const cache = confirmed([0, 3, 1]);
    expect(cache.candidates(P, 4, 2, T + 1)).toEqual([1, 3]);
    expect(cache.candidates(P, 4, 1, T + 1)).toEqual([1, 2, 3]);
    expect(cache.candidates(P, 4, 2, T + 1000)).toEqual([0, 1, 2, 3]);
  });
});

describe('GET answers (stock)', () => {
  test('sums the shards while every one was seen within readMs, from any source', () => {
    const cache = new StockCache(settings);
    cache.remember(P, 0, stock(1, 2, 3), 4, T, 'store');
    cache.remember(P, 1, stock(4, 0, 1), 2, T + 100, 'view');
    expect(cache.stock(P, 2, T + 499)).toEqual({ available: 5, reserved: 2, sold: 4, received: 11 });
    expect(cache.stock(P, 2, T + 500)).toBeUndefined();
    expect(cache.stock(P, 3, T + 1)).toBeUndefined();
  });
});

test('forgets the product added first beyond maxProducts', () => {
  const cache = new StockCache(settings);
  for (const id of ['a', 'b', 'c', 'd']) cache.remember(id, 0, stock(1), 1, T, 'store');
  expect(cache.newest('a', 0)).toBeUndefined();
  expect(cache.newest('d', 0)).toMatchObject({ version: 1 });
});
