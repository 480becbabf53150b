// Pure decider tests for the inventory domain: products, stock shards and
// reservations. Given events (folded), when a command, then the events it
// decides and the states they fold to; plus a seeded randomized property test
// of the stock invariant over random command sequences.
import assert from 'node:assert/strict';
import {
  decideProduct,
  decideReservation,
  isExpired,
  NO_STOCK,
  type Product,
  type ProductEvent,
  type ProductState,
  planReservation,
  productDecider,
  type Reservation,
  type ReservationCommand,
  type ReservationDecision,
  type ReservationEvent,
  type ReservationState,
  reservationDecider,
  type ShardEvent,
  type ShardEvents,
  type Stock,
  shardCountFor,
  shardFold,
  shardId,
  splitEvenly,
  sumStock,
} from '../../functions/inventory/domain';
import { productView } from '../../functions/inventory/http-views';
import { foldEvents } from '../../functions/shared/events';
import { deciderSpec } from '../support/decider-spec';
import { createProduct, restock } from '../support/inventory-decisions';

const T0 = new Date('2025-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const PRODUCT_ID = 'prd_0123456789abcdef0123456789abcdef';
const RESERVATION_ID = 'res_0123456789abcdef0123456789abcdef';
const ORDER_ID = 'ord_0123456789abcdef0123456789abcdef';

const givenProduct = (...events: ProductEvent[]): ProductState =>
  foldEvents(productDecider, productDecider.initial, events);
const givenShard = (...events: ShardEvent[]): Stock => foldEvents(shardFold, shardFold.initial, events);
const reservationSpec = deciderSpec(reservationDecider);
const givenReservation = (...events: ReservationEvent[]): ReservationState =>
  reservationSpec.given(...events).state;

const received = (quantity: number): ShardEvent => ({
  type: 'StockReceived',
  schemaVersion: 1,
  data: { quantity },
});
const reserved = (quantity: number, reservationId = RESERVATION_ID): ShardEvent => ({
  type: 'StockReserved',
  schemaVersion: 1,
  data: { reservationId, quantity },
});
const released = (quantity: number, reservationId = RESERVATION_ID): ShardEvent => ({
  type: 'StockReleased',
  schemaVersion: 1,
  data: { reservationId, quantity },
});
const sold = (quantity: number, reservationId = RESERVATION_ID): ShardEvent => ({
  type: 'StockSold',
  schemaVersion: 1,
  data: { reservationId, quantity },
});

const productCreated = (shardCount = 2): ProductEvent => ({
  type: 'ProductCreated',
  schemaVersion: 1,
  data: {
    productId: PRODUCT_ID,
    sku: 'SKU-1',
    name: 'Widget',
    priceCents: 1_999,
    initialStock: 100,
    shardCount,
    createdAt: T0.toISOString(),
  },
});

const placed = (
  parts = [{ shard: 0, quantity: 3 }],
  expiresAt = at(600),
  orderId: string | null = ORDER_ID,
): ReservationEvent => ({
  type: 'ReservationPlaced',
  schemaVersion: 1,
  data: {
    reservationId: RESERVATION_ID,
    productId: PRODUCT_ID,
    quantity: parts.reduce((n, p) => n + p.quantity, 0),
    parts,
    expiresAt: expiresAt.toISOString(),
    ...(orderId ? { orderId } : {}),
    placedAt: T0.toISOString(),
  },
});
const reservationReleased = (reason: 'RELEASED' | 'EXPIRED'): ReservationEvent => ({
  type: 'ReservationReleased',
  schemaVersion: 1,
  data: { reservationId: RESERVATION_ID, reason },
});
const reservationCommitted: ReservationEvent = {
  type: 'ReservationCommitted',
  schemaVersion: 1,
  data: { reservationId: RESERVATION_ID, orderId: ORDER_ID },
};

function existing<S>(state: S | null): S {
  if (state === null) throw new Error('expected an aggregate');
  return state;
}

/** A reservation that took stock (not a voided one). */
function held(state: ReservationState): Reservation {
  const reservation = existing(state);
  if (reservation.status === 'VOIDED') throw new Error('expected a reservation that took stock');
  return reservation;
}

/** The decision on a reservation, with its shard events; a refusal fails the test. */
function decided(command: ReservationCommand, state: ReservationState): ReservationDecision {
  const decision = decideReservation(command, state);
  if ('rejection' in decision) throw new Error(`refused: ${decision.rejection.code}`);
  return decision;
}

const place = (command: Omit<Extract<ReservationCommand, { type: 'Place' }>, 'type'>) =>
  decided({ type: 'Place', ...command }, null);
const release = (r: ReservationState) => decideReservation({ type: 'Release' }, r);
const expire = (r: ReservationState, now: Date) => decideReservation({ type: 'Expire', now }, r);
const commit = (r: ReservationState, now: Date) => decideReservation({ type: 'Commit', now }, r);

const NOTHING: ReservationDecision = { reservation: [], shards: [] };

const invariantHolds = (s: Stock) => s.available + s.reserved + s.sold === s.received;

describe('inventory domain', () => {
  describe('product evolve', () => {
    it('starts with no product', () => {
      expect(givenProduct()).toBeNull();
    });

    it('ProductCreated records identity, price and shard count', () => {
      expect(givenProduct(productCreated(4))).toEqual({
        productId: PRODUCT_ID,
        sku: 'SKU-1',
        name: 'Widget',
        priceCents: 1_999,
        shardCount: 4,
        createdAt: T0.toISOString(),
      });
    });

    it('ProductRestocked leaves the product as it was (stock lives in the shards)', () => {
      const restocked: ProductEvent = {
        type: 'ProductRestocked',
        schemaVersion: 1,
        data: { productId: PRODUCT_ID, quantity: 10, perShard: [5, 5] },
      };
      expect(givenProduct(productCreated(2), restocked)).toEqual(givenProduct(productCreated(2)));
    });
  });

  describe('shard evolve', () => {
    it('starts empty', () => {
      expect(givenShard()).toEqual(NO_STOCK);
    });

    it('StockReceived adds to available and received', () => {
      expect(givenShard(received(10), received(5))).toEqual({
        available: 15,
        reserved: 0,
        sold: 0,
        received: 15,
      });
    });

    it('StockReserved moves available to reserved', () => {
      expect(givenShard(received(10), reserved(4))).toEqual({
        available: 6,
        reserved: 4,
        sold: 0,
        received: 10,
      });
    });

    it('StockReleased moves reserved back to available', () => {
      expect(givenShard(received(10), reserved(4), released(4))).toEqual({
        available: 10,
        reserved: 0,
        sold: 0,
        received: 10,
      });
    });

    it('StockSold moves reserved to sold', () => {
      expect(givenShard(received(10), reserved(4), sold(4))).toEqual({
        available: 6,
        reserved: 0,
        sold: 4,
        received: 10,
      });
    });

    it('every event keeps available + reserved + sold = received', () => {
      const events = [
        received(10),
        reserved(4),
        reserved(3, 'res_b'),
        sold(4),
        released(3, 'res_b'),
        received(2),
      ];
      let s = shardFold.initial;
      for (const e of events) {
        s = shardFold.evolve(s, e);
        expect(invariantHolds(s)).toBe(true);
      }
    });
  });

  describe('reservation evolve', () => {
    it('starts with no reservation', () => {
      expect(givenReservation()).toBeNull();
    });

    it('ReservationPlaced holds the parts', () => {
      const parts = [
        { shard: 0, quantity: 2 },
        { shard: 1, quantity: 3 },
      ];
      expect(givenReservation(placed(parts))).toEqual({
        reservationId: RESERVATION_ID,
        productId: PRODUCT_ID,
        quantity: 5,
        parts,
        status: 'RESERVED',
        expiresAt: at(600).toISOString(),
        orderId: ORDER_ID,
        createdAt: T0.toISOString(),
      });
    });

    it('ReservationPlaced without an order has no orderId', () => {
      expect(held(givenReservation(placed(undefined, undefined, null)))).not.toHaveProperty('orderId');
    });

    it('ReservationReleased sets the reason as the status', () => {
      expect(held(givenReservation(placed(), reservationReleased('RELEASED'))).status).toBe('RELEASED');
      expect(held(givenReservation(placed(), reservationReleased('EXPIRED'))).status).toBe('EXPIRED');
    });

    it('ReservationCommitted sets COMMITTED', () => {
      expect(held(givenReservation(placed(), reservationCommitted)).status).toBe('COMMITTED');
    });

    it('release or commit of no reservation leaves none', () => {
      expect(givenReservation(reservationReleased('RELEASED'))).toBeNull();
      expect(givenReservation(reservationCommitted)).toBeNull();
    });

    it('ReservationVoided (stored by earlier versions) leaves a VOIDED reservation with no placeholder stock', () => {
      const voided: ReservationEvent = {
        type: 'ReservationVoided',
        schemaVersion: 1,
        data: {
          reservationId: RESERVATION_ID,
          productId: PRODUCT_ID,
          orderId: ORDER_ID,
          voidedAt: T0.toISOString(),
        },
      };
      expect(givenReservation(voided)).toEqual({
        status: 'VOIDED',
        reservationId: RESERVATION_ID,
        productId: PRODUCT_ID,
        orderId: ORDER_ID,
        voidedAt: T0.toISOString(),
      });
      expect(release(givenReservation(voided))).toEqual(NOTHING);
      // As earlier versions stored it: VOID, with a placeholder quantity, parts and expiry.
      const legacy = {
        reservationId: RESERVATION_ID,
        productId: PRODUCT_ID,
        quantity: 0,
        parts: [],
        status: 'VOID',
        expiresAt: T0.toISOString(),
        orderId: ORDER_ID,
        createdAt: T0.toISOString(),
      };
      expect(reservationDecider.upcastState?.(legacy as unknown as ReservationState)).toEqual(
        givenReservation(voided),
      );
      expect(reservationDecider.upcastState?.(givenReservation(placed()))).toEqual(
        givenReservation(placed()),
      );
      expect(expire(givenReservation(voided), at(10_000))).toEqual(NOTHING);
      expect(commit(givenReservation(voided), T0)).toEqual({ rejection: { code: 'NOT_HELD' } });
    });
  });

  describe('splitEvenly', () => {
    it.each([
      [10, 1, [10]],
      [10, 2, [5, 5]],
      [10, 3, [4, 3, 3]],
      [10, 4, [3, 3, 2, 2]],
      [2, 4, [1, 1, 0, 0]],
      [0, 3, [0, 0, 0]],
      [80_000, 64, Array.from({ length: 64 }, () => 1_250)],
    ])('splits %i over %i shards as %j', (quantity, shards, expected) => {
      expect(splitEvenly(quantity, shards)).toEqual(expected);
    });

    it('always sums to the quantity with shares at most one apart', () => {
      for (let q = 0; q <= 200; q += 7) {
        for (let n = 1; n <= 9; n++) {
          const parts = splitEvenly(q, n);
          expect(parts).toHaveLength(n);
          expect(parts.reduce((a, b) => a + b, 0)).toBe(q);
          expect(Math.max(...parts) - Math.min(...parts)).toBeLessThanOrEqual(1);
        }
      }
    });
  });

  describe('shardCountFor', () => {
    const policy = { unitsPerShard: 1_000, maxShards: 64 };
    it.each([
      [0, 1],
      [1, 1],
      [1_000, 1],
      [1_001, 2],
      [5_000, 5],
      [63_999, 64],
      [80_000, 64],
      [10_000_000, 64],
    ])('gives %i units %i shard(s)', (stock, shards) => {
      expect(shardCountFor(stock, policy)).toBe(shards);
    });
  });

  describe('planReservation', () => {
    it('takes it all from the first shard, in the caller order, that has it', () => {
      const shards = [
        { shard: 2, available: 1 },
        { shard: 0, available: 5 },
        { shard: 1, available: 50 },
      ];
      expect(planReservation(shards, 5)).toEqual([{ shard: 0, quantity: 5 }]);
      expect(planReservation(shards, 1)).toEqual([{ shard: 2, quantity: 1 }]);
    });

    it('spreads over several shards, fullest first, when none has it all', () => {
      const shards = [
        { shard: 0, available: 2 },
        { shard: 1, available: 0 },
        { shard: 2, available: 4 },
        { shard: 3, available: 3 },
      ];
      expect(planReservation(shards, 8)).toEqual([
        { shard: 2, quantity: 4 },
        { shard: 3, quantity: 3 },
        { shard: 0, quantity: 1 },
      ]);
    });

    it('can use every unit of every shard', () => {
      const shards = [
        { shard: 0, available: 2 },
        { shard: 1, available: 3 },
      ];
      expect(planReservation(shards, 5)).toEqual([
        { shard: 1, quantity: 3 },
        { shard: 0, quantity: 2 },
      ]);
    });

    it('is null when the shards together do not have enough', () => {
      expect(
        planReservation(
          [
            { shard: 0, available: 2 },
            { shard: 1, available: 3 },
          ],
          6,
        ),
      ).toBeNull();
      expect(planReservation([{ shard: 0, available: 0 }], 1)).toBeNull();
      expect(planReservation([], 1)).toBeNull();
    });
  });

  describe('createProduct', () => {
    it('decides ProductCreated and the initial stock split over the shards', () => {
      const decided = createProduct({
        productId: PRODUCT_ID,
        sku: 'SKU-1',
        name: 'Widget',
        priceCents: 1_999,
        stock: 10,
        shardCount: 3,
        now: T0,
      });
      expect(decided.product).toEqual([
        {
          type: 'ProductCreated',
          schemaVersion: 1,
          data: {
            productId: PRODUCT_ID,
            sku: 'SKU-1',
            name: 'Widget',
            priceCents: 1_999,
            initialStock: 10,
            shardCount: 3,
            createdAt: T0.toISOString(),
          },
        },
      ]);
      expect(decided.shards).toEqual([
        { shard: 0, events: [received(4)] },
        { shard: 1, events: [received(3)] },
        { shard: 2, events: [received(3)] },
      ]);
    });
  });

  describe('restock', () => {
    it('splits the quantity over the shards and skips shards that get nothing', () => {
      const product = existing(givenProduct(productCreated(4)));
      const decided = restock(product, 6);
      expect(decided.product).toEqual([
        {
          type: 'ProductRestocked',
          schemaVersion: 1,
          data: { productId: PRODUCT_ID, quantity: 6, perShard: [2, 2, 1, 1] },
        },
      ]);
      expect(decided.shards).toEqual([
        { shard: 0, events: [received(2)] },
        { shard: 1, events: [received(2)] },
        { shard: 2, events: [received(1)] },
        { shard: 3, events: [received(1)] },
      ]);
      expect(restock(product, 1).shards).toEqual([{ shard: 0, events: [received(1)] }]);
    });

    it('refuses no product; creating one twice is refused', () => {
      expect(decideProduct({ type: 'Restock', quantity: 1 }, null)).toEqual({
        rejection: { code: 'NO_SUCH_PRODUCT' },
      });
      const create = {
        type: 'Create',
        productId: PRODUCT_ID,
        sku: 'S',
        name: 'N',
        priceCents: 1,
        stock: 1,
        shardCount: 1,
        now: T0,
      } as const;
      expect(decideProduct(create, existing(givenProduct(productCreated(1))))).toEqual({
        rejection: { code: 'ALREADY_CREATED' },
      });
    });

    it('every shard receives its share at creation, an empty one too', () => {
      const decided = createProduct({
        productId: PRODUCT_ID,
        sku: 'S',
        name: 'N',
        priceCents: 1,
        stock: 1,
        shardCount: 3,
        now: T0,
      });
      expect(decided.shards).toEqual([
        { shard: 0, events: [received(1)] },
        { shard: 1, events: [received(0)] },
        { shard: 2, events: [received(0)] },
      ]);
    });
  });

  describe('reserve', () => {
    it('decides ReservationPlaced and one StockReserved per part', () => {
      const parts = [
        { shard: 1, quantity: 4 },
        { shard: 0, quantity: 2 },
      ];
      const decision = place({
        reservationId: RESERVATION_ID,
        productId: PRODUCT_ID,
        parts,
        expiresAt: at(600),
        orderId: ORDER_ID,
        now: T0,
      });
      expect(decision).toEqual({
        reservation: [placed(parts)],
        shards: [
          { shard: 1, events: [reserved(4)] },
          { shard: 0, events: [reserved(2)] },
        ],
      });
    });

    it('leaves orderId out when there is no order', () => {
      const decision = place({
        reservationId: RESERVATION_ID,
        productId: PRODUCT_ID,
        parts: [{ shard: 0, quantity: 1 }],
        expiresAt: at(600),
        now: T0,
      });
      expect(decision.reservation[0]!.data).not.toHaveProperty('orderId');
    });

    it('refuses a reservation placed already', () => {
      reservationSpec
        .given(placed())
        .when({
          type: 'Place',
          reservationId: RESERVATION_ID,
          productId: PRODUCT_ID,
          parts: [],
          expiresAt: at(600),
          now: T0,
        })
        .thenRejects({ code: 'ALREADY_PLACED' });
    });
  });

  describe('release', () => {
    const parts = [
      { shard: 0, quantity: 2 },
      { shard: 1, quantity: 3 },
    ];

    it('gives every part back to its shard', () => {
      expect(release(givenReservation(placed(parts)))).toEqual({
        reservation: [reservationReleased('RELEASED')],
        shards: [
          { shard: 0, events: [released(2)] },
          { shard: 1, events: [released(3)] },
        ],
      });
    });

    it.each([
      ['RELEASED', [reservationReleased('RELEASED')]],
      ['EXPIRED', [reservationReleased('EXPIRED')]],
    ] as const)('decides nothing for a reservation already %s', (_status, after) => {
      const reservation = givenReservation(placed(parts), ...after);
      expect(release(reservation)).toEqual(NOTHING);
      expect(expire(reservation, at(10_000))).toEqual(NOTHING);
    });

    it('refuses to release a reservation sold with its order; expiring it decides nothing', () => {
      reservationSpec
        .given(placed(parts), reservationCommitted)
        .when({ type: 'Release' })
        .thenRejects({ code: 'RESERVATION_COMMITTED' });
      expect(expire(givenReservation(placed(parts), reservationCommitted), at(10_000))).toEqual(NOTHING);
    });

    it('is idempotent: releasing twice decides nothing the second time', () => {
      const { state } = reservationSpec
        .given(placed(parts))
        .when({ type: 'Release' })
        .thenDecides([reservationReleased('RELEASED')]);
      expect(release(state)).toEqual(NOTHING);
    });

    it('refuses no reservation', () => {
      expect(release(null)).toEqual({ rejection: { code: 'NO_SUCH_RESERVATION' } });
    });
  });

  describe('expire', () => {
    const reservation = held(givenReservation(placed(undefined, at(600))));

    it('decides nothing before the expiry time', () => {
      expect(isExpired(reservation, at(599))).toBe(false);
      expect(expire(reservation, at(599))).toEqual(NOTHING);
    });

    it('releases with reason EXPIRED at and after the expiry time', () => {
      expect(isExpired(reservation, at(600))).toBe(true);
      expect(expire(reservation, at(600))).toEqual({
        reservation: [reservationReleased('EXPIRED')],
        shards: [{ shard: 0, events: [released(3)] }],
      });
      expect(decided({ type: 'Expire', now: at(3_600) }, reservation).reservation).toEqual([
        reservationReleased('EXPIRED'),
      ]);
    });

    it('is idempotent: expiring twice decides nothing the second time', () => {
      const first = decided({ type: 'Expire', now: at(601) }, reservation);
      const after = held(foldEvents(reservationDecider, reservation, first.reservation));
      expect(after.status).toBe('EXPIRED');
      expect(expire(after, at(602))).toEqual(NOTHING);
    });

    it('does not expire a reservation that was released or committed', () => {
      for (const ended of [reservationReleased('RELEASED'), reservationCommitted]) {
        const r = held(givenReservation(placed(undefined, at(600)), ended));
        expect(isExpired(r, at(601))).toBe(false);
        expect(expire(r, at(601))).toEqual(NOTHING);
      }
    });
  });

  describe('commit', () => {
    const parts = [
      { shard: 0, quantity: 2 },
      { shard: 1, quantity: 3 },
    ];
    const NOT_HELD = { rejection: { code: 'NOT_HELD' } };

    it('sells every part of a held reservation before its expiry', () => {
      expect(commit(givenReservation(placed(parts, at(600))), at(599))).toEqual({
        reservation: [reservationCommitted],
        shards: [
          { shard: 0, events: [sold(2)] },
          { shard: 1, events: [sold(3)] },
        ],
      });
    });

    it('omits orderId from ReservationCommitted when the reservation has none', () => {
      reservationSpec
        .given(placed(parts, at(600), null))
        .when({ type: 'Commit', now: T0 })
        .thenDecides([
          { type: 'ReservationCommitted', schemaVersion: 1, data: { reservationId: RESERVATION_ID } },
        ]);
    });

    it('is idempotent: committing twice decides nothing the second time', () => {
      const { state } = reservationSpec
        .given(placed(parts, at(600)))
        .when({ type: 'Commit', now: T0 })
        .thenDecides([reservationCommitted]);
      expect(commit(state, T0)).toEqual(NOTHING);
      // Even after the expiry time: the reservation is sold, not held.
      expect(commit(state, at(10_000))).toEqual(NOTHING);
    });

    it('is refused once the expiry time has passed, even before the sweeper expired it', () => {
      const reservation = givenReservation(placed(parts, at(600)));
      expect(commit(reservation, at(600))).toEqual(NOT_HELD);
      expect(commit(reservation, at(601))).toEqual(NOT_HELD);
    });

    it('is refused after the reservation expired', () => {
      expect(commit(givenReservation(placed(parts, at(600)), reservationReleased('EXPIRED')), at(1))).toEqual(
        NOT_HELD,
      );
    });

    it('is refused after the reservation was released', () => {
      expect(
        commit(givenReservation(placed(parts, at(600)), reservationReleased('RELEASED')), at(1)),
      ).toEqual(NOT_HELD);
    });
  });

  describe('views', () => {
    it('sumStock adds shards field by field', () => {
      expect(
        sumStock([
          { available: 1, reserved: 2, sold: 3, received: 6 },
          { available: 10, reserved: 20, sold: 30, received: 60 },
        ]),
      ).toEqual({ available: 11, reserved: 22, sold: 33, received: 66 });
      expect(sumStock([])).toEqual(NO_STOCK);
    });

    it('productView shows the product with its summed stock', () => {
      const product = existing(givenProduct(productCreated(2)));
      const stock = sumStock([
        givenShard(received(10), reserved(2)),
        givenShard(received(5), reserved(1), sold(1)),
      ]);
      expect(productView(product, stock)).toEqual({
        productId: PRODUCT_ID,
        sku: 'SKU-1',
        name: 'Widget',
        priceCents: 1_999,
        available: 12,
        reserved: 2,
        sold: 1,
        createdAt: T0.toISOString(),
      });
    });

    it('shardId joins product and index', () => {
      expect(shardId(PRODUCT_ID, 7)).toBe(`${PRODUCT_ID}#7`);
    });
  });

  describe('property: the stock invariant holds after any sequence of commands', () => {
    /** mulberry32: a small seeded PRNG, so that a failing run can be replayed from its seed. */
    function prng(seed: number) {
      let a = seed >>> 0;
      const next = () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
      };
      const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
      const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)]!;
      const shuffle = <T>(items: readonly T[]): T[] => {
        const out = [...items];
        for (let i = out.length - 1; i > 0; i--) {
          const j = int(0, i);
          [out[i], out[j]] = [out[j]!, out[i]!];
        }
        return out;
      };
      return { next, int, pick, shuffle };
    }

    interface World {
      readonly product: Product;
      shards: Stock[];
      readonly reservations: Map<string, Reservation>;
      now: Date;
      receivedTotal: number;
    }

    function applyShards(world: World, decided: readonly ShardEvents[]) {
      for (const { shard, events } of decided) {
        world.shards[shard] = foldEvents(shardFold, world.shards[shard]!, events);
      }
    }

    function apply(
      world: World,
      reservationId: string,
      decision: ReservationDecision | { rejection: unknown },
    ) {
      if ('rejection' in decision) return;
      if (decision.reservation.length > 0) {
        const before = world.reservations.get(reservationId) ?? null;
        world.reservations.set(
          reservationId,
          held(foldEvents(reservationDecider, before, decision.reservation)),
        );
      }
      applyShards(world, decision.shards);
    }

    function check(world: World, where: string) {
      world.shards.forEach((s, i) => {
        assert.ok(invariantHolds(s), `${where}: shard ${i} breaks the invariant: ${JSON.stringify(s)}`);
        assert.ok(
          s.available >= 0 && s.reserved >= 0 && s.sold >= 0,
          `${where}: shard ${i} went negative: ${JSON.stringify(s)}`,
        );
      });
      const total = sumStock(world.shards);
      const all = [...world.reservations.values()];
      const quantityWith = (status: Reservation['status']) =>
        all.filter((r) => r.status === status).reduce((n, r) => n + r.quantity, 0);
      assert.deepStrictEqual(
        { reserved: total.reserved, sold: total.sold, received: total.received },
        {
          reserved: quantityWith('RESERVED'),
          sold: quantityWith('COMMITTED'),
          received: world.receivedTotal,
        },
        `${where}: totals disagree with the reservations`,
      );
      // Each held reservation's parts are still reserved in their shards.
      const perShard = world.shards.map(() => 0);
      for (const r of all) {
        if (r.status === 'RESERVED') for (const p of r.parts) perShard[p.shard]! += p.quantity;
      }
      assert.deepStrictEqual(
        world.shards.map((s) => s.reserved),
        perShard,
        `${where}: shard reserved counts disagree with the held reservations`,
      );
    }

    function run(seed: number) {
      const rnd = prng(seed);
      const shardCount = rnd.int(1, 8);
      const initialStock = rnd.int(0, 60);
      const created = createProduct({
        productId: PRODUCT_ID,
        sku: 'SKU-P',
        name: 'Property',
        priceCents: 100,
        stock: initialStock,
        shardCount,
        now: T0,
      });
      const world: World = {
        product: existing(foldEvents(productDecider, null, created.product)),
        shards: Array.from({ length: shardCount }, () => NO_STOCK),
        reservations: new Map(),
        now: T0,
        receivedTotal: initialStock,
      };
      applyShards(world, created.shards);
      check(world, `seed ${seed}, start`);

      let nextId = 0;
      const steps = rnd.int(20, 120);
      for (let step = 1; step <= steps; step++) {
        const where = `seed ${seed}, step ${step}`;
        const known = [...world.reservations.values()];
        const op = rnd.pick([
          'reserve',
          'reserve',
          'release',
          'expire',
          'commit',
          'restock',
          'tick',
        ] as const);
        if (op === 'reserve' || known.length === 0) {
          const quantity = rnd.int(1, 15);
          const order = rnd.shuffle(world.shards.map((s, shard) => ({ shard, available: s.available })));
          const parts = planReservation(order, quantity);
          const available = sumStock(world.shards).available;
          if (!parts) {
            assert.ok(available < quantity, `${where}: ${quantity} refused with ${available} available`);
          } else {
            assert.strictEqual(
              parts.reduce((n, p) => n + p.quantity, 0),
              quantity,
              `${where}: plan total`,
            );
            assert.strictEqual(
              new Set(parts.map((p) => p.shard)).size,
              parts.length,
              `${where}: shard twice`,
            );
            for (const p of parts) {
              assert.ok(
                p.quantity > 0 && p.quantity <= world.shards[p.shard]!.available,
                `${where}: part ${JSON.stringify(p)} of ${JSON.stringify(world.shards)}`,
              );
            }
            const reservationId = `res_${seed}_${nextId++}`;
            apply(
              world,
              reservationId,
              place({
                reservationId,
                productId: PRODUCT_ID,
                parts,
                expiresAt: new Date(world.now.getTime() + rnd.int(1, 300) * 1000),
                now: world.now,
              }),
            );
          }
        } else if (op === 'release') {
          const r = rnd.pick(known);
          const decision = release(r);
          assert.strictEqual('rejection' in decision, r.status === 'COMMITTED', `${where}: release refused`);
          assert.strictEqual(
            'reservation' in decision && decision.reservation.length > 0,
            r.status === 'RESERVED',
            `${where}: release`,
          );
          apply(world, r.reservationId, decision);
          // A second release (a repeated request) decides the same: nothing, or the same refusal.
          const again = release(world.reservations.get(r.reservationId)!);
          assert.deepStrictEqual(again, 'rejection' in decision ? decision : NOTHING, where);
        } else if (op === 'expire') {
          const r = rnd.pick(known);
          const decision = decided({ type: 'Expire', now: world.now }, r);
          assert.strictEqual(decision.reservation.length > 0, isExpired(r, world.now), `${where}: expire`);
          apply(world, r.reservationId, decision);
          assert.deepStrictEqual(expire(world.reservations.get(r.reservationId)!, world.now), NOTHING, where);
        } else if (op === 'commit') {
          const r = rnd.pick(known);
          const result = commit(r, world.now);
          const sellable = r.status === 'RESERVED' && !isExpired(r, world.now);
          assert.strictEqual(
            !('rejection' in result),
            sellable || r.status === 'COMMITTED',
            `${where}: commit`,
          );
          if (!('rejection' in result)) {
            apply(world, r.reservationId, result);
            assert.deepStrictEqual(
              commit(world.reservations.get(r.reservationId)!, world.now),
              NOTHING,
              where,
            );
          }
        } else if (op === 'restock') {
          const quantity = rnd.int(0, 40);
          applyShards(world, restock(world.product, quantity).shards);
          world.receivedTotal += quantity;
        } else {
          world.now = new Date(world.now.getTime() + rnd.int(1, 120) * 1000);
        }
        check(world, where);
      }
      return world;
    }

    it('over 500 seeded random sequences on 1-8 shards', () => {
      const shardCounts = new Set<number>();
      for (let seed = 1; seed <= 500; seed++) shardCounts.add(run(seed).shards.length);
      // The seeds do reach every shard count from 1 to 8.
      expect([...shardCounts].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });
  });
});
