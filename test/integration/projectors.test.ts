// The inventory projector Lambda (the one read model left: products' stock
// summed over shards, and the index of held reservations by expiry; orders,
// customers and payments are read from their event store) against a real DynamoDB
// Local of their own, fed DynamoDB stream events built from real event-store
// items: a repeated batch, batches out of order and a batch of several
// aggregates all end in the same views.
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { type LocalDynamoDb, startDynamoDb } from '@commerce/local-cloud';
import { StandardRetryStrategy } from '@smithy/core/retry';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import {
  decideReservation,
  type Product,
  planReservation,
  productDecider,
  type ReservationEvent,
  reservationDecider,
  type ShardEvent,
  type ShardEvents,
  type Stock,
  shardFold,
  shardId,
  sumStock,
} from '../../functions/inventory/domain';
import { EXPIRY_INDEX, inventoryViewsEnvironment } from '../../functions/inventory/seams';
import { expiryPartition, type ProductViewItem, shardsOfView } from '../../functions/inventory/view';
import { DynamoDbDocuments } from '../../functions/shared/dynamodb-documents';
import { DynamoDbEventStore } from '../../functions/shared/dynamodb-event-store';
import { AggregateStore, KEY } from '../../functions/shared/event-store';
import { type DomainEvent, type Fold, foldEvents } from '../../functions/shared/events';
import { createProduct, restock } from '../support/inventory-decisions';

// The engine starts in this process at once; the timeout covers a busy machine.
const START_TIMEOUT_MS = 30_000;
const T0 = new Date('2025-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

type Handler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
type Item = Record<string, unknown> & { aggregateId: string; version: number };

let ddb: LocalDynamoDb;
let base: DynamoDBClient;
let documents: DynamoDBDocumentClient;
/** The SDK clients the handlers' modules made, destroyed at the end. */
const handlerClients: { destroy(): void }[] = [];
const savedEnv = { ...process.env };

// ---- tables and handlers -----------------------------------------------------

const DELIVERIES = ['inOrder', 'oneByOne', 'twice', 'newestFirst', 'shuffled'] as const;
type Delivery = (typeof DELIVERIES)[number];
const SERVICES = ['inventory'] as const;
type Service = (typeof SERVICES)[number];
const tableFor = (service: Service, delivery: Delivery | 'steps') => `${service}-views-${delivery}`;

/** The sparse indexes of the services' views tables, as their constructs define them. */
const VIEW_INDEXES: Record<Service, { name: string; partition: string; sort: string } | undefined> = {
  inventory: { name: EXPIRY_INDEX.name, partition: EXPIRY_INDEX.partitionKey, sort: EXPIRY_INDEX.sortKey },
};

async function createViewsTable(name: string, service: Service) {
  const index = VIEW_INDEXES[service];
  await base.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'id', AttributeType: 'S' },
        ...(index
          ? [
              { AttributeName: index.partition, AttributeType: 'S' as const },
              { AttributeName: index.sort, AttributeType: 'S' as const },
            ]
          : []),
      ],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      ...(index
        ? {
            GlobalSecondaryIndexes: [
              {
                IndexName: index.name,
                KeySchema: [
                  { AttributeName: index.partition, KeyType: 'HASH' },
                  { AttributeName: index.sort, KeyType: 'RANGE' },
                ],
                Projection: { ProjectionType: 'KEYS_ONLY' },
              },
            ],
          }
        : {}),
    }),
  );
}

const HANDLER_MODULES: Record<Service, string> = {
  inventory: '../../functions/inventory/handlers/projector',
};

/**
 * Loads a fresh copy of a projector module with its views table set to
 * `table`, as its construct writes it: it reads its environment (and
 * `shared/aws.ts` builds its client) at load.
 */
function loadProjector(service: Service, table: string): Handler {
  Object.assign(process.env, inventoryViewsEnvironment.write({ viewsTable: table }));
  let handler: Handler | undefined;
  jest.isolateModules(() => {
    handler = (require(HANDLER_MODULES[service]) as { handler: Handler }).handler;
    handlerClients.push(
      (require('../../functions/shared/aws') as { documents: { destroy(): void } }).documents,
    );
  });
  return handler!;
}

const projectors = new Map<string, Handler>();
const projectorFor = (service: Service, delivery: Delivery | 'steps') =>
  projectors.get(tableFor(service, delivery))!;

beforeAll(async () => {
  ddb = await startDynamoDb();
  const config = {
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  base = new DynamoDBClient(config);
  documents = DynamoDBDocumentClient.from(base);

  // What the handlers' shared client reads; set before any handler module loads.
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: ddb.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // The projectors log each event applied at INFO (a stage's trail); here they would fill the test's output.
    POWERTOOLS_LOG_LEVEL: 'WARN',
  });
  for (const service of SERVICES) {
    for (const delivery of [...DELIVERIES, 'steps'] as const) {
      const table = tableFor(service, delivery);
      await createViewsTable(table, service);
      projectors.set(table, loadProjector(service, table));
    }
  }
}, START_TIMEOUT_MS);

afterAll(async () => {
  for (const client of handlerClients) client.destroy();
  base?.destroy();
  await ddb?.stop();
  for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
  Object.assign(process.env, savedEnv);
});

// ---- stream events -------------------------------------------------------------

// Only `pending` is used: it builds items and never sends anything.
const offline = new DynamoDbDocuments({ region: 'us-east-1', retryStrategy: new StandardRetryStrategy(1) });
afterAll(() => offline.destroy());

/**
 * An aggregate's event items as the store writes them (`AggregateStore.pending`),
 * one append after another; the last item of each append carries the state.
 */
function appendsOf<S, E extends DomainEvent>(
  aggregateType: string,
  fold: Fold<S, E>,
  aggregateId: string,
  appends: readonly (readonly E[])[],
): { items: Item[]; state: S } {
  const store = new AggregateStore(new DynamoDbEventStore(offline), 'events', aggregateType, fold);
  let state = fold.initial;
  let version = 0;
  const items: Item[] = [];
  appends.forEach((events, n) => {
    const pending = store.pending(aggregateId, version, events, state, { now: at(n), correlationId: 'corr' });
    items.push(...pending.items.map((i) => i.Put!.Item as Item));
    state = foldEvents(fold, state, events);
    version += events.length;
  });
  return { items, state };
}

let sequence = 1_000;
/** A DynamoDB stream record (INSERT, NEW_IMAGE) of one event item, as Lambda delivers it. */
function insert(item: Item): DynamoDBRecord {
  sequence++;
  return {
    eventID: `evt-${sequence}`,
    eventName: 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:000000000000:table/events/stream/2025-03-01T00:00:00.000',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(T0.getTime() / 1000),
      Keys: marshall({ [KEY.partition]: item.aggregateId, [KEY.sort]: item.version }) as never,
      NewImage: marshall(item, { removeUndefinedValues: true }) as never,
      SequenceNumber: String(sequence).padStart(21, '0'),
      SizeBytes: JSON.stringify(item).length,
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

/** A record the projectors must ignore: the stream also carries removals. */
function removal(item: Item): DynamoDBRecord {
  const record = insert(item);
  return { ...record, eventName: 'REMOVE', dynamodb: { ...record.dynamodb, NewImage: undefined } };
}

async function feed(handler: Handler, items: readonly Item[]) {
  const response = await handler({ Records: items.map(insert) });
  expect(response).toEqual({ batchItemFailures: [] });
}

/** A seeded shuffle (mulberry32), so that a failing order can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Delivers the same items (given oldest first) to five views tables in five
 * ways: in one batch, one record per batch in order, the same batch twice,
 * one record per batch newest first, and shuffled batches of three with
 * every record delivered twice.
 */
async function deliverEveryWay(service: Service, items: readonly Item[]) {
  await feed(projectorFor(service, 'inOrder'), items);

  for (const item of items) await feed(projectorFor(service, 'oneByOne'), [item]);

  await feed(projectorFor(service, 'twice'), items);
  await feed(projectorFor(service, 'twice'), items);

  for (const item of [...items].reverse()) await feed(projectorFor(service, 'newestFirst'), [item]);

  const mixed = shuffled([...items, ...items], 42);
  for (let i = 0; i < mixed.length; i += 3)
    await feed(projectorFor(service, 'shuffled'), mixed.slice(i, i + 3));
}

async function scan(table: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await documents.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
  return Items.sort((a, b) => String(a.id).localeCompare(String(b.id)));
}

async function expectSameViewsEveryWay(service: Service) {
  const reference = await scan(tableFor(service, 'inOrder'));
  expect(reference.length).toBeGreaterThan(0);
  for (const delivery of DELIVERIES)
    expect({ delivery, views: await scan(tableFor(service, delivery)) }).toEqual({
      delivery,
      views: reference,
    });
  return reference;
}

const viewOf = (views: Record<string, unknown>[], id: string) => views.find((v) => v.id === id);

// ---- inventory ----------------------------------------------------------------------

describe('inventory projector', () => {
  const productId = `prd_${'7'.repeat(32)}`;
  const reservationId = `res_${'8'.repeat(32)}`;

  /**
   * A product over 2 shards: created with 9 units (5 + 4), restocked with 4
   * (2 + 2), a reservation of 8 taken from both shards, then released.
   */
  function inventoryHistory() {
    const created = createProduct({
      productId,
      sku: 'SKU-P',
      name: 'Projected',
      priceCents: 500,
      stock: 9,
      shardCount: 2,
      now: T0,
    });
    const product = foldEvents(productDecider, null, created.product) as Product;
    const restocked = restock(product, 4);
    const shardAppends: ShardEvent[][][] = [[], []];
    const addShards = (decided: readonly ShardEvents[]) => {
      for (const s of decided) shardAppends[s.shard]!.push(s.events);
    };
    addShards(created.shards);
    addShards(restocked.shards);

    const stockAfterRestock = shardAppends.map((appends) =>
      foldEvents(shardFold, shardFold.initial, appends.flat()),
    );
    const parts = planReservation(
      stockAfterRestock.map((s, shard) => ({ shard, available: s.available })),
      8,
    );
    expect(parts).toEqual([
      { shard: 0, quantity: 7 },
      { shard: 1, quantity: 1 },
    ]);
    const reserved = decideReservation(
      { type: 'Place', reservationId, productId, parts: parts!, expiresAt: at(900), now: at(1) },
      null,
    );
    if ('rejection' in reserved) throw new Error('expected the reservation to be placed');
    addShards(reserved.shards);
    const reservation = foldEvents(reservationDecider, null, reserved.reservation);
    const released = decideReservation({ type: 'Release' }, reservation);
    if ('rejection' in released) throw new Error('expected the reservation to be released');
    addShards(released.shards);

    const productItems = appendsOf('Product', productDecider, productId, [
      created.product,
      restocked.product,
    ]);
    const shards = shardAppends.map((appends, i) =>
      appendsOf('StockShard', shardFold, shardId(productId, i), appends),
    );
    const reservationItems = appendsOf('Reservation', reservationDecider, reservationId, [
      reserved.reservation,
      released.reservation,
    ] as ReservationEvent[][]);
    return { productItems, shards, reservationItems };
  }

  const history = inventoryHistory();
  const allItems = [
    ...history.productItems.items,
    ...history.shards.flatMap((s) => s.items),
    ...history.reservationItems.items,
  ];
  const [placedItem, releasedItem] = history.reservationItems.items as [Item, Item];

  const heldIds = async (table: string) => {
    const { Items = [] } = await documents.send(
      new QueryCommand({
        TableName: table,
        IndexName: EXPIRY_INDEX.name,
        KeyConditionExpression: 'expiryPartition = :p AND expiresAt <= :t',
        ExpressionAttributeValues: { ':p': expiryPartition(reservationId), ':t': at(3_600).toISOString() },
      }),
    );
    return Items.map((i) => i.id);
  };

  const invariant = (s: Stock) => s.available + s.reserved + s.sold === s.received;
  /** The shards' stock the product's view item holds, in shard order. */
  const shardViewsOf = (views: Record<string, unknown>[]) =>
    shardsOfView((viewOf(views, productId) ?? { id: productId }) as unknown as ProductViewItem)
      .sort((a, b) => a.shard - b.shard)
      .map((s) => s.stock);

  it('builds the history the test means: 2 shards of several versions, a reservation placed then released', () => {
    expect(history.shards.map((s) => s.items.map((i) => i.version))).toEqual([
      [1, 2, 3, 4],
      [1, 2, 3, 4],
    ]);
    expect(history.shards.map((s) => s.state)).toEqual([
      { available: 7, reserved: 0, sold: 0, received: 7 },
      { available: 6, reserved: 0, sold: 0, received: 6 },
    ]);
    expect(placedItem).toMatchObject({ version: 1, foldVersion: 1, state: { status: 'RESERVED' } });
    expect(releasedItem).toMatchObject({ version: 2, foldVersion: 1, state: { status: 'RELEASED' } });
  });

  it('the product view sums its shards and keeps the invariant, whichever way the batches come', async () => {
    await deliverEveryWay('inventory', allItems);
    const views = await expectSameViewsEveryWay('inventory');
    const view = viewOf(views, productId) as unknown as ProductViewItem;
    expect(view.product).toEqual(history.productItems.state);
    expect(view.productVersion).toBe(2);
    // Each shard's newest state is on the product's one item, under its own attribute, with its version;
    // no item of the views table but the product's and the reservation's.
    // (`<digit count><version>:<available>:<reserved>:<sold>:<received>`, see view.ts).
    expect(view).toMatchObject({ s0: '14:7:0:0:7', s1: '14:6:0:0:6' });
    expect(views.map((v) => v.id).sort()).toEqual([productId, reservationId].sort());
    const shards = shardViewsOf(views);
    expect(shards).toEqual([history.shards[0]!.state, history.shards[1]!.state]);
    expect(shards.every(invariant)).toBe(true);
    expect(sumStock(shards)).toEqual({ available: 13, reserved: 0, sold: 0, received: 13 });

    // The released reservation is out of the expiry index in every table.
    expect(viewOf(views, reservationId)).toEqual({
      id: reservationId,
      version: 2,
      productId,
      status: 'RELEASED',
      expiresAt: at(900).toISOString(),
    });
    for (const delivery of DELIVERIES) expect(await heldIds(tableFor('inventory', delivery))).toEqual([]);
  });

  it('a shard entry earlier versions wrote as a map is read, and replaced only by a newer state', async () => {
    const table = tableFor('inventory', 'steps');
    const legacyProduct = `${productId}-legacy`;
    const shardItems = history.shards[0]!.items.map((item) => ({
      ...item,
      aggregateId: `${legacyProduct}#0`,
    })) as Item[];
    const legacyEntry = { v: 3, a: 1, r: 2, s: 0, n: 3 };
    await documents.send(new PutCommand({ TableName: table, Item: { id: legacyProduct, s0: legacyEntry } }));
    const viewOfLegacy = async () => (await scan(table)).find((v) => v.id === legacyProduct)!;
    expect(shardsOfView((await viewOfLegacy()) as unknown as ProductViewItem)).toEqual([
      { shard: 0, version: 3, stock: { available: 1, reserved: 2, sold: 0, received: 3 } },
    ]);

    const handler = projectorFor('inventory', 'steps');
    await feed(handler, [shardItems[1]!]);
    expect((await viewOfLegacy()).s0).toEqual(legacyEntry);
    await feed(handler, [shardItems[3]!]);
    expect((await viewOfLegacy()).s0).toBe('14:7:0:0:7');
  });

  it('a product of 64 shards created in one batch is projected whole: every shard on its one item', async () => {
    // Its 64 entries in one UpdateItem once made a condition of 4,169 bytes, over DynamoDB's 4 KB for an
    // expression: the write was refused (ValidationException), and only the stream mapping's bisection of
    // the failed batch got the entries written, in halves, after a failed call and a retried invocation.
    const wideProduct = `prd_${'6'.repeat(32)}`;
    const created = createProduct({
      productId: wideProduct,
      sku: 'SKU-W',
      name: 'Wide',
      priceCents: 500,
      stock: 1_000_000,
      shardCount: 64,
      now: T0,
    });
    const items = [
      ...appendsOf('Product', productDecider, wideProduct, [created.product]).items,
      ...created.shards.flatMap(
        (s) => appendsOf('StockShard', shardFold, shardId(wideProduct, s.shard), [s.events]).items,
      ),
    ];
    await feed(projectorFor('inventory', 'steps'), items);
    const view = viewOf(
      await scan(tableFor('inventory', 'steps')),
      wideProduct,
    ) as unknown as ProductViewItem;
    const shards = shardsOfView(view);
    expect(shards).toHaveLength(64);
    expect(sumStock(shards.map((s) => s.stock))).toEqual({
      available: 1_000_000,
      reserved: 0,
      sold: 0,
      received: 1_000_000,
    });
  });

  it('while the reservation is held the product view shows it reserved, summing to the invariant', async () => {
    const handler = projectorFor('inventory', 'steps');
    const table = tableFor('inventory', 'steps');
    // Everything up to the reservation, shard versions 3, newest first.
    const upToReserved = allItems.filter(
      (i) => i !== releasedItem && !(i.aggregateId.includes('#') && i.version === 4),
    );
    await feed(handler, [...upToReserved].reverse());
    const shards = shardViewsOf(await scan(table));
    expect(shards).toHaveLength(2);
    expect(shards.every(invariant)).toBe(true);
    expect(sumStock(shards)).toEqual({ available: 5, reserved: 8, sold: 0, received: 13 });
  });

  it('the held reservation carries expiryPartition while RESERVED and loses it after release', async () => {
    const table = tableFor('inventory', 'steps');
    const handler = projectorFor('inventory', 'steps');
    // Placed (perhaps again: the previous test projected it too, and a repeat changes nothing).
    await feed(handler, [placedItem]);
    expect(viewOf(await scan(table), reservationId)).toEqual({
      id: reservationId,
      version: 1,
      productId,
      status: 'RESERVED',
      expiresAt: at(900).toISOString(),
      expiryPartition: expiryPartition(reservationId),
    });
    expect(await heldIds(table)).toEqual([reservationId]);

    await feed(handler, [releasedItem]);
    const released = viewOf(await scan(table), reservationId);
    expect(released).toMatchObject({ version: 2, status: 'RELEASED' });
    expect(released).not.toHaveProperty('expiryPartition');
    expect(await heldIds(table)).toEqual([]);

    // The placed record again (a retry, or a late delivery) does not bring it back.
    await feed(handler, [placedItem]);
    await feed(handler, [placedItem, releasedItem, placedItem]);
    const after = viewOf(await scan(table), reservationId);
    expect(after).toEqual(released);
    expect(await heldIds(table)).toEqual([]);
  });

  it('removal records change nothing (the stream also carries them)', async () => {
    const table = tableFor('inventory', 'steps');
    const before = await scan(table);
    const response = await projectorFor('inventory', 'steps')({ Records: allItems.map(removal) });
    expect(response).toEqual({ batchItemFailures: [] });
    expect(await scan(table)).toEqual(before);
  });

  it('released delivered before placed: never indexed as held', async () => {
    // A fresh table-scoped reservation id so the steps table's earlier state does not matter.
    const otherId = `res_${'9'.repeat(32)}`;
    const other = appendsOf('Reservation', reservationDecider, otherId, [
      [
        {
          type: 'ReservationPlaced',
          schemaVersion: 1,
          data: {
            reservationId: otherId,
            productId,
            quantity: 1,
            parts: [{ shard: 1, quantity: 1 }],
            expiresAt: at(900).toISOString(),
            placedAt: at(1).toISOString(),
          },
        },
      ],
      [
        {
          type: 'ReservationReleased',
          schemaVersion: 1,
          data: { reservationId: otherId, reason: 'EXPIRED' },
        },
      ],
    ]);
    const handler = projectorFor('inventory', 'steps');
    const table = tableFor('inventory', 'steps');
    await feed(handler, [other.items[1]!]);
    await feed(handler, [other.items[0]!]);
    const view = viewOf(await scan(table), otherId);
    expect(view).toEqual({
      id: otherId,
      version: 2,
      productId,
      status: 'EXPIRED',
      expiresAt: at(900).toISOString(),
    });
    const { Items = [] } = await documents.send(
      new QueryCommand({
        TableName: table,
        IndexName: EXPIRY_INDEX.name,
        KeyConditionExpression: 'expiryPartition = :p',
        ExpressionAttributeValues: { ':p': expiryPartition(otherId) },
      }),
    );
    expect(Items.map((i) => i.id)).not.toContain(otherId);
  });
});
