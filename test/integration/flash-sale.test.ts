// A flash sale at small scale against the shared local cloud: two hundred
// concurrent reservations of one product of six stock shards. No oversell,
// the invariant as read through the API, no 5xx; once sold out, refusals with
// no read and no write of the event store; a restock or release made by
// another writer is reservable again within the cache's bound.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { StandardRetryStrategy } from '@smithy/core/retry';
import { shardFold, shardId } from '../../functions/inventory/domain';
import { STOCK_CACHE } from '../../functions/inventory/stock-cache';
import { DynamoDbDocuments } from '../../functions/shared/dynamodb-documents';
import { DynamoDbEventStore } from '../../functions/shared/dynamodb-event-store';
import { AggregateStore } from '../../functions/shared/event-store';
import {
  awsEndpoint,
  createProduct,
  del,
  eventually,
  get,
  localAdmin,
  post,
  postRetryingThrottled,
  readCallsOf,
  undisturbed,
} from '../support/api';
import { restock } from '../support/inventory-decisions';

interface ProductView {
  productId: string;
  available: number;
  reserved: number;
  sold: number;
}
interface Stats {
  reads: Record<string, Record<string, number>>;
  dynamodb: Record<string, { readUnits: number }>;
  writes: Record<
    string,
    { itemWrites: number; hottestKeys: { key: string; writes: number; share: number }[] }
  >;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const received = (p: ProductView) => p.available + p.reserved + p.sold;

let inventoryTable: string;
let viewsTable: string;
let base: DynamoDBClient;
let documents: DynamoDBDocumentClient;
/** The functions' client, as the event store is given it. */
let events: DynamoDbDocuments;
afterAll(() => {
  base.destroy();
  events.destroy();
});

beforeAll(async () => {
  base = new DynamoDBClient({
    endpoint: awsEndpoint(),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  documents = DynamoDBDocumentClient.from(base);
  events = new DynamoDbDocuments({
    endpoint: awsEndpoint(),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    retryStrategy: new StandardRetryStrategy(3),
  });
  const { tables } = await localAdmin<{ tables: string[] }>('wiring');
  inventoryTable = tables.find((t) => t.startsWith('InventoryEvents'))!;
  viewsTable = tables.find((t) => t.startsWith('InventoryViews'))!;
});

/** Reads and item writes of the inventory event store so far. */
async function eventStoreIo() {
  const stats = await localAdmin<Stats>('stats');
  return { reads: readCallsOf(stats, inventoryTable), writes: stats.writes[inventoryTable]?.itemWrites ?? 0 };
}

/** Receives `quantity` more into every shard of a product straight in the event store, as another sandbox would. */
async function restockElsewhere(productId: string, shardCount: number, quantity: number) {
  const shards = new AggregateStore(new DynamoDbEventStore(events), inventoryTable, 'StockShard', shardFold);
  const decided = restock(
    { productId, sku: 'x', name: 'x', priceCents: 1, shardCount, createdAt: new Date().toISOString() },
    quantity,
  );
  for (const s of decided.shards) {
    const loaded = await shards.load(shardId(productId, s.shard));
    await shards.append(shardId(productId, s.shard), loaded.version, s.events, loaded.state, {
      now: new Date(),
    });
  }
}

describe('flash sale: one product of six shards, 200 concurrent reservations of 1,000 units', () => {
  // 6,400 units over 1,250-unit shards: six shards of 1,067 or 1,066. A reservation of 1,000 fits in one
  // shard only once, and the remainders (four of 67, two of 66: 400 in all) cannot make up another, so
  // exactly six succeed. Then reservations of 100 take the 400 left, each from two shards.
  const STOCK = 6_400;
  const REQUESTS = 200;
  let product: ProductView;

  beforeAll(async () => {
    // The hot-key meter counts from here (the suite runs its files one at a time).
    await localAdmin('reset-stats');
    product = await createProduct({ stock: STOCK });
  });

  // Sent as a client sends them under overload: a slow machine may refuse some of 200 at once at the edge
  // (`429`, nothing changed; seen in CI: 4 of 200), and those are sent again after their `retry-after`.
  const reserveAll = (count: number, quantity: number) =>
    Promise.all(
      Array.from({ length: count }, () =>
        postRetryingThrottled(`/products/${product.productId}/reservations`, { quantity }),
      ),
    );

  test('exactly what the shards can give is reserved, the rest refused with 409 INSUFFICIENT_STOCK, no 5xx', async () => {
    const big = await reserveAll(REQUESTS, 1000);
    const statuses = big.map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(6);
    expect(statuses.filter((s) => s === 409)).toHaveLength(REQUESTS - 6);
    for (const r of big.filter((x) => x.status === 409))
      expect(r.body).toHaveProperty('error.code', 'INSUFFICIENT_STOCK');

    const rest = await reserveAll(10, 100);
    expect(rest.map((r) => r.status).sort()).toEqual([...Array(4).fill(201), ...Array(6).fill(409)]);
    const ids = new Set([...big, ...rest].filter((r) => r.status === 201).map((r) => r.body.reservationId));
    expect(ids.size).toBe(10);

    const read = await get<ProductView>(`/products/${product.productId}`);
    expect(received(read.body)).toBe(STOCK);
    const settled = await eventually(
      () => get<ProductView>(`/products/${product.productId}`),
      (r) => r.body.reserved === STOCK,
    );
    expect(settled.body).toMatchObject({ available: 0, reserved: STOCK, sold: 0 });
  });

  test('sold out: refusals read nothing of the product and write only their own remembered answer', async () => {
    // Once the sandboxes' knowledge has aged, a burst of refusals that read the shards (one per sandbox the
    // function has: each keeps its own knowledge, and a burst spreads over all of them); then a burst that need not.
    await sleep(STOCK_CACHE.confirmMs);
    const confirmedAt = Date.now();
    await Promise.all(
      Array.from({ length: 50 }, () => post(`/products/${product.productId}/reservations`, { quantity: 1 })),
    );
    const before = await eventStoreIo();
    const burst = await Promise.all(
      Array.from({ length: 50 }, () => post(`/products/${product.productId}/reservations`, { quantity: 1 })),
    );
    const after = await eventStoreIo();
    expect(burst.map((r) => r.status)).toEqual(Array(50).fill(409));
    expect(burst[0]!.body).toMatchObject({
      error: {
        code: 'INSUFFICIENT_STOCK',
        details: [{ productId: product.productId, requested: 1, available: 0 }],
      },
    });
    // Each request carries its Idempotency-Key (required on reservations): its refusal is remembered in one
    // item of its own, so that a repeat gets the same 409. Nothing of the product is written.
    expect(after.writes - before.writes).toBe(burst.length);
    // Without the cache every refusal reads every shard (six reads each). With it the burst reads nothing
    // while the knowledge is younger than the bound, and the requests in flight once it ages read again.
    // Other suites' sagas may still read the table in the background, so the count allows for a few.
    const aged = Date.now() - confirmedAt >= STOCK_CACHE.confirmMs;
    expect(after.reads - before.reads).toBeLessThan(aged ? burst.length : burst.length / 2);
  });

  test('a release through the API is reservable again at once', async () => {
    const { productId } = await createProduct({ stock: 1 });
    const taken = await post<{ reservationId: string }>(`/products/${productId}/reservations`, {
      quantity: 1,
    });
    expect(taken.status).toBe(201);
    expect((await post(`/products/${productId}/reservations`, { quantity: 1 })).status).toBe(409);
    expect((await del(`/products/${productId}/reservations/${taken.body.reservationId}`)).status).toBe(200);
    expect((await post(`/products/${productId}/reservations`, { quantity: 1 })).status).toBe(201);
  });

  test(`stock received by another writer is reservable again within ${STOCK_CACHE.confirmMs} ms`, async () => {
    // Once the sandbox's knowledge has aged, confirm sold out (a read), then restock behind the API's back.
    await sleep(STOCK_CACHE.confirmMs);
    const confirmedAt = Date.now();
    expect((await post(`/products/${product.productId}/reservations`, { quantity: 1 })).status).toBe(409);
    await restockElsewhere(product.productId, 6, 6);
    const refused = await post(`/products/${product.productId}/reservations`, { quantity: 1 });
    // Refused from what the sandbox knew, while that knowledge was young enough (a slow machine may outrun it).
    if (Date.now() - confirmedAt < STOCK_CACHE.confirmMs / 2) expect(refused.status).toBe(409);
    await sleep(STOCK_CACHE.confirmMs);
    const again = await post(`/products/${product.productId}/reservations`, { quantity: 1 });
    expect(again.status).toBe(201);
    const read = await eventually(
      () => get<ProductView>(`/products/${product.productId}`),
      (r) => r.body.reserved === STOCK + 1 + (refused.status === 201 ? 1 : 0),
    );
    expect(received(read.body)).toBe(STOCK + 6);
  });

  test("writes spread over the shards: no key of the event store takes more than a shard's share, and the views write the product's item once per batch", async () => {
    // Every reservation is projected by now (the first test waited for it).
    const { writes } = await localAdmin<Stats>('stats');
    // Reservations write their own items (one key each) and one or two shards of 64, so a shard's key
    // takes a small part of the table's writes.
    const [hottest] = writes[inventoryTable]!.hottestKeys;
    expect(hottest!.share).toBeLessThan(1 / 4);
    // The views hold each shard's state on the product's one item, written once per projector batch
    // (every shard the batch changed at once), not once per shard event: a small part of the events.
    const productWrites =
      writes[viewsTable]!.hottestKeys.find((k) => k.key === product.productId)?.writes ?? 0;
    expect(productWrites).toBeGreaterThan(0);
    expect(productWrites * 4).toBeLessThan(writes[inventoryTable]!.itemWrites);
  });
});

describe('GET /products/{id} from the cache', () => {
  test(`a change made by another writer shows within ${STOCK_CACHE.readMs} ms plus the read model's lag, and never goes back`, async () => {
    const product = await createProduct({ stock: 5 });
    const first = await get<ProductView>(`/products/${product.productId}`);
    expect(first.body).toMatchObject({ available: 5, reserved: 0, sold: 0 });
    await restockElsewhere(product.productId, 1, 4);
    const seen: number[] = [];
    const shown = await eventually(
      async () => {
        const r = await get<ProductView>(`/products/${product.productId}`);
        seen.push(r.body.available);
        return r;
      },
      (r) => r.body.available === 9,
      STOCK_CACHE.readMs + 5_000,
    );
    expect(received(shown.body)).toBe(9);
    // Monotonic: 5 until the change is seen, then 9, never back.
    expect(seen).toEqual([...seen.filter((a) => a === 5), ...seen.filter((a) => a === 9)]);
    expect(seen.every((a) => a === 5 || a === 9)).toBe(true);
  });

  test('a GET of a product of 64 shards reads one item of the read model (half a read unit), not one per shard', async () => {
    const big = await createProduct({ stock: 1_000_000 });
    // Until the projector has written every shard's entry, a GET reads the shards it lacks from the store.
    await eventually(
      () => documents.send(new GetCommand({ TableName: viewsTable, Key: { id: big.productId } })),
      ({ Item }) => Object.keys(Item ?? {}).filter((k) => /^s\d+$/.test(k)).length === 64,
    );
    await get(`/products/${big.productId}`);
    const calls = (s: Stats, table: string, operation: string) => s.reads[table]?.[operation] ?? 0;
    const units = (s: Stats) => s.dynamodb[viewsTable]?.readUnits ?? 0;
    /** One GET past the sandboxes' cache bound (so it reads the read model), with what it cost. */
    const measuredGet = async () => {
      await sleep(STOCK_CACHE.readMs + 50);
      const before = await localAdmin<Stats>('stats');
      const read = await get<ProductView>(`/products/${big.productId}`);
      const after = await localAdmin<Stats>('stats');
      const delta = (table: string, operation: string) =>
        calls(after, table, operation) - calls(before, table, operation);
      return {
        body: read.body,
        viewCalls: readCallsOf(after, viewsTable) - readCallsOf(before, viewsTable),
        viewGets: delta(viewsTable, 'GetItem'),
        viewBatchGets: delta(viewsTable, 'BatchGetItem'),
        viewReadUnits: units(after) - units(before),
        storeQueries: delta(inventoryTable, 'Query'),
      };
    };
    // The counters are the whole cloud's: a scheduled run (the expirer releasing another test's
    // reservation, the saga sweeper) can read these tables during the GET, and its read units land in
    // the same counter. Such a run only adds calls, so a GET measured while any other call reached the
    // read model is measured again; three tries with every one disturbed would be a failure.
    const measured = await undisturbed(measuredGet, (m) => m.viewCalls !== 1 || m.storeQueries > 1);
    expect(measured.body).toMatchObject({ available: 1_000_000, reserved: 0, sold: 0 });
    expect(measured).toMatchObject({ viewCalls: 1, viewGets: 1, viewBatchGets: 0, viewReadUnits: 0.5 });
    // Nothing of the shards from the event store (its product item, at most, in a sandbox that had not read it).
    expect(measured.storeQueries).toBeLessThanOrEqual(1);
  });

  test('repeated GETs of one product are answered from memory: one read-model read per bound, not per request', async () => {
    const product = await createProduct({ stock: 3 });
    await get(`/products/${product.productId}`);
    const reads = async () => readCallsOf(await localAdmin<Stats>('stats'), viewsTable);
    const before = await reads();
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => get(`/products/${product.productId}`)),
    );
    const elapsed = Date.now() - started;
    expect(answers.every((a) => a.status === 200)).toBe(true);
    // The expiry sweeper queries the views table's index in the background, 16 partitions every 500 ms.
    const sweeps = 16 * Math.ceil((elapsed + 1000) / 500);
    expect((await reads()) - before).toBeLessThanOrEqual(
      Math.ceil(elapsed / STOCK_CACHE.readMs) + 1 + sweeps,
    );
  });
});
