// Who may do what (api.md, "Identity and access"), on the in-memory event store: one customer per sub,
// a shop caller reaching only its own customer, orders, payments and reservations, and the per-caller
// hold limit, each enforced where the write is (race-free), not by a read before it.
import type { Context } from 'aws-lambda';
import { CustomerExists, registrationFor } from '../../functions/accounts/application';
import { customerOwnership } from '../../functions/accounts/ownership';
import { inventoryCommands } from '../../functions/inventory/application';
import type { Caller } from '../../functions/shared/caller';
import { ClientError } from '../../functions/shared/errors';
import type { HttpRequest } from '../../functions/shared/http';
import { idempotentCreation } from '../../functions/shared/idempotency';
import { at, inMemoryCommerce, succeeded, T0 } from '../support/in-memory-commerce';

const meta = { now: T0, correlationId: 'corr-1' };
const ANN: Caller = { sub: 'sub-ann', isAdmin: false };
const BOB: Caller = { sub: 'sub-bob', isAdmin: false };
const OPS: Caller = { sub: 'operator-client', isAdmin: true };
const ADA = { name: 'Ada', email: 'ada@example.com' };
const cus = (n: number) => `cus_${n.toString(16).padStart(32, '0')}`;
const ord = (n: number) => `ord_${n.toString(16).padStart(32, 'a')}`;
const UNKNOWN_CUSTOMER = 'cus_ffffffffffffffffffffffffffffffff';

/** Registers `caller` as the handler does: the fields it may set, for itself. */
async function register(c: ReturnType<typeof inMemoryCommerce>, caller: Caller, id: string, extra = {}) {
  const registration = registrationFor(caller, { ...ADA, ...extra });
  if ('forbidden' in registration) throw new Error(`forbidden: ${registration.forbidden.join(', ')}`);
  return c.accounts.register(id, registration.ok, meta);
}

describe('registering customers', () => {
  test('a shop caller registers itself, with the default limit; admins set limits and owners', () => {
    expect(registrationFor(ANN, ADA)).toEqual({ ok: { ...ADA, ownerSub: 'sub-ann' } });
    expect(registrationFor(ANN, { ...ADA, creditLimitCents: 5 })).toEqual({
      forbidden: ['creditLimitCents'],
    });
    expect(registrationFor(ANN, { ...ADA, ownerSub: 'sub-ann' })).toEqual({ forbidden: ['ownerSub'] });
    expect(registrationFor(ANN, { ...ADA, creditLimitCents: 0, ownerSub: 'x' })).toEqual({
      forbidden: ['creditLimitCents', 'ownerSub'],
    });
    expect(registrationFor(OPS, { ...ADA, creditLimitCents: 5, ownerSub: 'sub-bob' })).toEqual({
      ok: { ...ADA, creditLimitCents: 5, ownerSub: 'sub-bob' },
    });
    // An admin's customer without ownerSub belongs to no shop caller (not to the admin either).
    expect(registrationFor(OPS, ADA)).toEqual({ ok: ADA });
  });

  test('the customer records its owner, and `me` finds it; before registering there is none', async () => {
    const c = inMemoryCommerce();
    expect(await c.accounts.customerOwnedBy(ANN.sub)).toBeUndefined();
    const customer = await register(c, ANN, cus(1));
    expect(customer).toMatchObject({ customerId: cus(1), ownerSub: 'sub-ann', creditLimitCents: 100_000 });
    expect(await c.accounts.customerOwnedBy(ANN.sub)).toEqual(customer);
    expect(await c.accounts.customerOwnedBy(BOB.sub)).toBeUndefined();
  });

  test('a second registration of the same sub is refused and writes nothing', async () => {
    const c = inMemoryCommerce();
    await register(c, ANN, cus(1));
    await expect(register(c, ANN, cus(2))).rejects.toBeInstanceOf(CustomerExists);
    expect(await c.accounts.customer(cus(2))).toBeUndefined();
    // An admin registering a customer for a sub that has one is refused alike.
    await expect(register(c, OPS, cus(3), { ownerSub: ANN.sub })).rejects.toBeInstanceOf(CustomerExists);
    // Other subs, and customers of no owner, are not affected.
    await register(c, BOB, cus(4));
    await register(c, OPS, cus(5));
    await register(c, OPS, cus(6));
  });

  test('two registrations of one sub at once: exactly one lands (the claim is in the same transaction)', async () => {
    const c = inMemoryCommerce();
    const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => register(c, ANN, cus(n))));
    const landed = outcomes.filter((o) => o.status === 'fulfilled');
    expect(landed).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(CustomerExists);
    const customers = await Promise.all([1, 2, 3, 4, 5].map((n) => c.accounts.customer(cus(n))));
    expect(customers.filter(Boolean)).toHaveLength(1);
  });
});

describe('orders and payments of a shop caller', () => {
  async function world() {
    const c = inMemoryCommerce();
    const ann = await register(c, ANN, cus(1));
    const bob = await register(c, BOB, cus(2));
    const product = await c.product(100, 500);
    const items = [{ productId: product.productId, quantity: 1 }];
    return { c, ann, bob, product, items };
  }

  test('an order without customerId is the caller’s own customer’s', async () => {
    const { c, ann, items } = await world();
    const placement = await c.orders.place(ord(1), { items }, meta, ANN);
    if ('rejection' in placement) throw new Error('expected a placement');
    expect(placement.order.customerId).toBe(ann.customerId);
  });

  test('naming another’s customer is refused exactly as naming an unknown one', async () => {
    const { c, bob, items } = await world();
    const another = await c.orders.place(ord(1), { customerId: bob.customerId, items }, meta, ANN);
    const unknown = await c.orders.place(ord(2), { customerId: UNKNOWN_CUSTOMER, items }, meta, ANN);
    expect(another).toEqual({
      rejection: { code: 'UNKNOWN_REFERENCES', missing: [{ field: 'customerId', id: bob.customerId }] },
    });
    expect(unknown).toEqual({
      rejection: { code: 'UNKNOWN_REFERENCES', missing: [{ field: 'customerId', id: UNKNOWN_CUSTOMER }] },
    });
    expect(await c.orders.order(ord(1))).toBeUndefined();
    // An admin may place one for anyone.
    const byAdmin = await c.orders.place(ord(3), { customerId: bob.customerId, items }, meta, OPS);
    expect('order' in byAdmin && byAdmin.order.customerId).toBe(bob.customerId);
  });

  test('a caller with no customer of its own, naming none, is refused as `me`', async () => {
    const { c, items } = await world();
    const placement = await c.orders.place(ord(1), { items }, meta, { sub: 'sub-new', isAdmin: false });
    expect(placement).toEqual({
      rejection: { code: 'UNKNOWN_REFERENCES', missing: [{ field: 'customerId', id: 'me' }] },
    });
  });

  test('a shop caller reads only its own orders; another’s is as an unknown id; an admin reads all', async () => {
    const { c, items } = await world();
    await c.orders.place(ord(1), { items }, meta, ANN);
    expect(await c.orders.orderFor(ANN, ord(1))).toMatchObject({ orderId: ord(1) });
    expect(await c.orders.orderFor(BOB, ord(1))).toBeUndefined();
    expect(await c.orders.orderFor(BOB, ord(9))).toBeUndefined();
    expect(await c.orders.orderFor({ sub: 'sub-new', isAdmin: false }, ord(1))).toBeUndefined();
    expect(await c.orders.orderFor(OPS, ord(1))).toMatchObject({ orderId: ord(1) });
  });

  test('payments (and saga traces, read through the order) belong to the order’s customer', async () => {
    const { c, ann, bob } = await world();
    const ownership = customerOwnership(c.stores.customers);
    expect(await ownership.owns(ANN, ann.customerId)).toBe(true);
    expect(await ownership.owns(ANN, bob.customerId)).toBe(false);
    expect(await ownership.owns(BOB, bob.customerId)).toBe(true);
    expect(await ownership.owns({ sub: 'sub-new', isAdmin: false }, ann.customerId)).toBe(false);
    expect(await ownership.owns(OPS, ann.customerId)).toBe(true);
    // A customer an admin registered for nobody is no shop caller's.
    const nobodys = await register(c, OPS, cus(7));
    expect(await ownership.owns(ANN, nobodys.customerId)).toBe(false);
  });
});

describe('reservations of a shop caller', () => {
  const LIMIT = 5;
  async function world(stock = 100) {
    const c = inMemoryCommerce();
    const inventory = inventoryCommands(c.stores.inventory, {
      reservationTtlSeconds: 600,
      unitsPerShard: 100,
      maxShards: 8,
      holdLimitPerCaller: LIMIT,
    });
    const product = await c.product(stock);
    return { c, inventory, productId: product.productId };
  }

  test('a reservation records who holds it, and only they (or an admin) may release it', async () => {
    const { inventory, productId } = await world();
    const mine = succeeded(await inventory.reserveStock(productId, 1, meta, 'res_a', ANN));
    expect(mine).toMatchObject({ holder: 'sub-ann', limited: true });
    const unknown = await inventory.releaseReservation(productId, 'res_unknown', 'RELEASED', meta, BOB);
    const anothers = await inventory.releaseReservation(productId, 'res_a', 'RELEASED', meta, BOB);
    // Exactly as an unknown reservation: the same refusal, naming the id asked for.
    expect(anothers).toEqual({ rejection: { code: 'NO_SUCH_RESERVATION', reservationId: 'res_a' } });
    expect(unknown).toEqual({ rejection: { code: 'NO_SUCH_RESERVATION', reservationId: 'res_unknown' } });
    expect(await inventory.releaseReservation(productId, 'res_a', 'RELEASED', meta, ANN)).toEqual({
      ok: { changed: true },
    });
    succeeded(await inventory.reserveStock(productId, 1, meta, 'res_b', ANN));
    expect(await inventory.releaseReservation(productId, 'res_b', 'RELEASED', meta, OPS)).toEqual({
      ok: { changed: true },
    });
  });

  test('a reservation with no holder (made before holders were recorded) is nobody’s: only an admin or its expiry ends it', async () => {
    const { c, inventory, productId } = await world();
    // Reserved with no caller, as every reservation was before authorization: no holder, not limited.
    const old = succeeded(await inventory.reserveStock(productId, 2, meta, 'res_old'));
    expect(old).not.toHaveProperty('holder');
    expect(old).not.toHaveProperty('limited');
    expect(await inventory.releaseReservation(productId, 'res_old', 'RELEASED', meta, ANN)).toEqual({
      rejection: { code: 'NO_SUCH_RESERVATION', reservationId: 'res_old' },
    });
    // It counts against nobody's limit.
    succeeded(await inventory.reserveStock(productId, LIMIT, meta, 'res_ann', ANN));
    const expiry = { ...meta, now: at(601) };
    expect(await inventory.releaseReservation(undefined, 'res_old', 'EXPIRED', expiry)).toEqual({
      ok: { changed: true },
    });
    expect(await c.stock(productId)).toMatchObject({ reserved: 0 + LIMIT });
  });

  test('a shop caller holds at most the limit of one product; beyond it HOLD_LIMIT_REACHED and nothing held', async () => {
    const { c, inventory, productId } = await world();
    succeeded(await inventory.reserveStock(productId, 3, meta, 'res_1', ANN));
    succeeded(await inventory.reserveStock(productId, 2, meta, 'res_2', ANN));
    expect(await inventory.reserveStock(productId, 1, meta, 'res_3', ANN)).toEqual({
      rejection: { code: 'HOLD_LIMIT_REACHED', productId, requested: 1, held: 5, limit: LIMIT },
    });
    expect(await c.stores.inventory.reservations.load('res_3')).toEqual({ state: null, version: 0 });
    expect(await c.stock(productId)).toMatchObject({ available: 95, reserved: 5 });
    // Others are not limited by it, nor by what it holds; an admin not at all.
    succeeded(await inventory.reserveStock(productId, 5, meta, 'res_4', BOB));
    succeeded(await inventory.reserveStock(productId, 50, meta, 'res_5', OPS));
    // One request over the limit alone is refused too.
    expect(
      await inventory.reserveStock(productId, 6, meta, 'res_6', { sub: 'sub-new', isAdmin: false }),
    ).toEqual({
      rejection: { code: 'HOLD_LIMIT_REACHED', productId, requested: 6, held: 0, limit: LIMIT },
    });
  });

  test('a product known to be sold out is refused with no read, not even of the caller’s holdings', async () => {
    const { c, inventory, productId } = await world(5);
    succeeded(await inventory.reserveStock(productId, 5, meta, 'res_1', OPS));
    const reads = () => c.events.calls.newest + c.events.calls.at + c.events.calls.pages;
    const before = reads();
    expect(await inventory.reserveStock(productId, 1, meta, 'res_2', ANN)).toMatchObject({
      rejection: { code: 'INSUFFICIENT_STOCK' },
    });
    expect(reads()).toBe(before);
  });

  test('releasing or expiring gives the caller its room back; a reservation past its expiry no longer counts', async () => {
    const { inventory, productId } = await world();
    succeeded(await inventory.reserveStock(productId, 5, meta, 'res_1', ANN));
    await inventory.releaseReservation(productId, 'res_1', 'RELEASED', meta, ANN);
    succeeded(await inventory.reserveStock(productId, 5, meta, 'res_2', ANN));
    // Past its expiry (600 s) and not yet swept: not live, so it does not count.
    const later = { ...meta, now: at(601) };
    succeeded(await inventory.reserveStock(productId, 5, later, 'res_3', ANN));
    // The sweeper expires res_2: its hold is returned in the same transaction.
    await inventory.releaseReservation(undefined, 'res_2', 'EXPIRED', later);
    expect(await inventory.reserveStock(productId, 1, later, 'res_4', ANN)).toMatchObject({
      rejection: { code: 'HOLD_LIMIT_REACHED', held: 5 },
    });
    await inventory.releaseReservation(undefined, 'res_3', 'EXPIRED', { ...meta, now: at(1300) });
    succeeded(await inventory.reserveStock(productId, 5, { ...meta, now: at(1300) }, 'res_5', ANN));
  });

  test('many reservations of one caller at once never hold more than the limit (the holdings are in the transaction)', async () => {
    const { c, inventory, productId } = await world();
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, n) => inventory.reserveStock(productId, 1, meta, `res_${n}`, ANN)),
    );
    const held = outcomes.filter((o) => 'ok' in o);
    expect(held).toHaveLength(LIMIT);
    for (const o of outcomes)
      if ('rejection' in o) expect(o.rejection.code).toMatch(/^(HOLD_LIMIT_REACHED|CONTENDED)$/);
    expect(await c.stock(productId)).toMatchObject({ reserved: LIMIT });
  });
});

describe('idempotency keys belong to the caller', () => {
  const request = (caller: Caller, key?: string): HttpRequest => ({
    routeKey: 'POST /orders',
    path: '/orders',
    pathParameters: {},
    headers: key === undefined ? {} : { 'idempotency-key': key },
    body: { items: [] },
    correlationId: 'corr-1',
    caller,
    now: T0,
    receivedAt: T0,
    context: {} as Context,
  });
  const creation = (keyRequired: boolean) => {
    const ids: string[] = [];
    const create = idempotentCreation(
      'ord',
      () => ({}),
      async (_input, _request, { id }) => {
        ids.push(id);
        return { statusCode: 202, body: id };
      },
      async () => undefined,
      { refuse: async () => undefined, refusal: async () => undefined },
      { keyRequired },
    );
    return { ids, create };
  };

  test('the same key from two subs makes two ids; from one sub, one', async () => {
    const { ids, create } = creation(false);
    await create(request(ANN, 'k-1'));
    await create(request(BOB, 'k-1'));
    await create(request(ANN, 'k-1'));
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids[2]).toBe(ids[0]);
  });

  test('a route that requires a key refuses a request without one, naming the header, and creates nothing', async () => {
    const { ids, create } = creation(true);
    const refused = await create(request(ANN)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClientError);
    expect(refused).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      details: [{ field: 'Idempotency-Key', message: 'required' }],
    });
    expect(ids).toEqual([]);
    await create(request(ANN, 'k'));
    expect(ids).toHaveLength(1);
  });
});

describe('personal data stays in the accounts’ store', () => {
  test('the saga’s input and every step’s output (its Step Functions history) carry no name or email', async () => {
    const c = inMemoryCommerce();
    const customer = await c.customer(100_000);
    const product = await c.product(10, 500);
    const steps = await c.placed(customer.customerId, [{ productId: product.productId, quantity: 2 }]);
    const reserved = await c.saga.reserve(steps.reserve(), T0);
    const captured = await c.saga.capture(
      { ...steps.capture(), ...('customer' in reserved ? reserved : {}) },
      T0,
    );
    const history = JSON.stringify([steps.reserve(), reserved, steps.capture(), captured]);
    expect(history).toContain(customer.customerId);
    // ReserveStock hands the customer it read on to CapturePayment: the state, as the store folds it.
    expect(JSON.stringify(reserved)).toContain('creditLimitCents');
    expect(history).not.toMatch(/Ada|ada@example\.com/);
    // The customer's own record still answers them.
    expect(await c.accounts.customer(customer.customerId)).toMatchObject({
      name: 'Ada',
      email: 'ada@example.com',
    });
  });
});
