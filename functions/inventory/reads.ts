import { BatchGetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { documents } from '../shared/aws';
import { type Product, type Stock, shardId, sumStock } from './domain';
import { allShards, type InventoryStores } from './store';
import type { ShardViewItem } from './view';

/** BatchGetItem takes at most 100 keys; a product has at most 64 shards. */
const BATCH_GET_LIMIT = 100;
const UNPROCESSED_RETRIES = 3;

/**
 * `GET /products/{id}`: the product's stock summed over its shards, served
 * from this sandbox's memory while every shard was seen less than the
 * cache's `readMs` ago, else from the shard items of the read model (one
 * BatchGetItem, shared by this sandbox's concurrent GETs of the product).
 * A shard the read model does not hold yet, and this sandbox has never seen,
 * is read from the event store. Each shard's newest version seen wins, so
 * the answers of one sandbox never go back in time.
 */
export function productReads(stores: InventoryStores, viewsTable: string) {
  const { stock } = stores;
  const inFlight = new Map<string, Promise<void>>();

  async function refresh(productId: string, shardCount: number) {
    const sentAt = Date.now();
    const indices = Array.from({ length: shardCount }, (_, i) => i);
    for (const item of await batchGetShardViews(indices.map((i) => shardId(productId, i)))) {
      const shard = Number(item.id.slice(item.id.lastIndexOf('#') + 1));
      const { available, reserved, sold, received } = item;
      stock.remember(productId, shard, { available, reserved, sold, received }, item.version, sentAt, 'view');
    }
    const unseen = indices.filter((i) => !stock.newest(productId, i));
    if (unseen.length > 0) await stores.loadShards(productId, unseen);
  }

  /** The product and its stock, or undefined if there is no such product. */
  async function read(productId: string): Promise<{ product: Product; stock: Stock } | undefined> {
    const product = await stores.loadProduct(productId);
    if (!product) return undefined;
    const fresh = stock.stock(productId, product.shardCount, Date.now());
    if (fresh) return { product, stock: fresh };
    let refreshing = inFlight.get(productId);
    if (!refreshing) {
      refreshing = refresh(productId, product.shardCount).finally(() => inFlight.delete(productId));
      inFlight.set(productId, refreshing);
    }
    await refreshing;
    const shards = allShards(product).map((i) => stock.newest(productId, i)!.stock);
    return { product, stock: sumStock(shards) };
  }

  async function batchGetShardViews(ids: readonly string[]): Promise<ShardViewItem[]> {
    const found: ShardViewItem[] = [];
    for (let start = 0; start < ids.length; start += BATCH_GET_LIMIT) {
      let keys: Record<string, unknown>[] | undefined = ids
        .slice(start, start + BATCH_GET_LIMIT)
        .map((id) => ({ id }));
      // Keys DynamoDB leaves unprocessed are asked again a few times; any left are read from the event store.
      for (let attempt = 0; keys && keys.length > 0 && attempt <= UNPROCESSED_RETRIES; attempt++) {
        const result: BatchGetCommandOutput = await documents.send(
          new BatchGetCommand({ RequestItems: { [viewsTable]: { Keys: keys } } }),
        );
        found.push(...((result.Responses?.[viewsTable] ?? []) as ShardViewItem[]));
        keys = result.UnprocessedKeys?.[viewsTable]?.Keys;
      }
    }
    return found;
  }

  return { read };
}
