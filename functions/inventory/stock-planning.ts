import type { Loaded } from '../shared/event-store';
import { serialized } from '../shared/serialized';
import { type Product, planReservation, type ReservationPart, type Stock, shardId } from './domain';
import { allShards, type InventoryStores } from './store';

/** Where a quantity of one product comes from, and the shards as read to plan it (the appends' expected versions). */
export interface StockPlan {
  readonly parts: ReservationPart[];
  readonly loaded: ReadonlyMap<number, Loaded<Stock>>;
}

/** A product short of the quantity asked: the units it has. */
export interface Shortfall {
  readonly available: number;
}

/**
 * The flash-sale machinery, behind one interface: how the inventory's use
 * cases find stock for a reservation while reading as little as they can. It
 * rests on this sandbox's StockCache (what it knows of each shard, and how
 * fresh), serializes the reservations of one shard within the sandbox, and
 * shares one read of every shard among concurrent callers. Nothing here
 * writes: a plan is appended by the use case, conditional on the shards'
 * versions as read, so a stale plan fails its append and never oversells.
 */
export interface StockPlanning {
  /**
   * The units available when this sandbox knows, with no read, that the
   * product is short of `quantity` (every shard confirmed within the cache's
   * bound); undefined when a reservation must be tried.
   */
  knownShortfall(product: Product, quantity: number): number | undefined;
  /**
   * Runs `take` with the whole of `quantity` planned from one random shard
   * not known to be short, one such call per shard at a time in this
   * sandbox: a call whose turn comes after the shard was found short
   * meanwhile does not read it again. Undefined when no shard was tried or
   * the one tried was short.
   */
  fromOneShard<T>(
    product: Product,
    quantity: number,
    take: (plan: StockPlan) => Promise<T>,
  ): Promise<T | undefined>;
  /**
   * Plans `quantity` over every shard, trying them in a random order, from
   * one read of all of them shared by this sandbox's concurrent callers (sent
   * at or after `notBefore`, the start of the caller's attempt: an older read
   * would lose the race the caller just lost again).
   */
  acrossShards(product: Product, quantity: number, notBefore: number): Promise<StockPlan | Shortfall>;
  /**
   * Plans `quantity` from one random shard (one read) when it has it all,
   * else over every shard; not serialized.
   */
  quickly(product: Product, quantity: number): Promise<StockPlan | Shortfall>;
}

export function stockPlanning(
  stores: Pick<InventoryStores, 'stock' | 'loadShards' | 'loadAllShards'>,
): StockPlanning {
  const { stock, loadShards, loadAllShards } = stores;

  const candidates = (product: Product, quantity: number) =>
    stock.candidates(product.productId, product.shardCount, quantity, Date.now());

  /** A random shard not known to be short of `quantity`, or undefined if every shard is. */
  function randomCandidate(product: Product, quantity: number) {
    const shards = candidates(product, quantity);
    return shards[Math.floor(Math.random() * shards.length)];
  }

  /** The whole of `quantity` from `shard`, in one read, if that shard has it. */
  async function planFromShard(
    product: Product,
    quantity: number,
    shard: number,
  ): Promise<StockPlan | undefined> {
    const loaded = await loadShards(product.productId, [shard]);
    if (loaded.get(shard)!.state.available < quantity) return undefined;
    return { parts: [{ shard, quantity }], loaded };
  }

  async function acrossShards(
    product: Product,
    quantity: number,
    notBefore: number,
  ): Promise<StockPlan | Shortfall> {
    const loaded = await loadAllShards(product, notBefore);
    const parts = planReservation(availability(shuffled(allShards(product)), loaded), quantity);
    if (parts) return { parts, loaded };
    return { available: [...loaded.values()].reduce((n, s) => n + s.state.available, 0) };
  }

  return {
    knownShortfall: (product, quantity) =>
      stock.shortfall(product.productId, product.shardCount, quantity, Date.now()),

    async fromOneShard(product, quantity, take) {
      const first = randomCandidate(product, quantity);
      if (first === undefined) return undefined;
      return serialized(shardId(product.productId, first), async () => {
        if (!candidates(product, quantity).includes(first)) return undefined;
        const planned = await planFromShard(product, quantity, first);
        return planned && take(planned);
      });
    },

    acrossShards,

    async quickly(product, quantity) {
      const attemptStart = Date.now();
      const first = randomCandidate(product, quantity);
      const single = first === undefined ? undefined : await planFromShard(product, quantity, first);
      return single ?? acrossShards(product, quantity, attemptStart);
    },
  };
}

export const isShortfall = (planned: StockPlan | Shortfall): planned is Shortfall => !('parts' in planned);

const availability = (
  order: readonly number[],
  loaded: ReadonlyMap<number, { state: { available: number } }>,
) =>
  order.flatMap((shard) => {
    const s = loaded.get(shard);
    return s ? [{ shard, available: s.state.available }] : [];
  });

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
