import { documents } from '../shared/aws';
import { type Product, type Stock, sumStock } from './domain';
import { allShards, type InventoryStores } from './store';
import { type ProductViewItem, shardsOfView } from './view';

/**
 * `GET /products/{id}`: the product's stock summed over its shards, served
 * from this sandbox's memory while every shard was seen less than the
 * cache's `readMs` ago, else from the product's item of the read model, which
 * holds every shard's state (one GetItem however many shards, shared by this
 * sandbox's concurrent GETs of the product).
 * A shard the read model does not hold yet, and this sandbox has never seen,
 * is read from the event store. Each shard's newest version seen wins, so
 * the answers of one sandbox never go back in time.
 */
export function productReads(stores: InventoryStores, viewsTable: string) {
  const { stock } = stores;
  const inFlight = new Map<string, Promise<void>>();

  async function refresh(productId: string, shardCount: number) {
    const sentAt = Date.now();
    const { Item } = await documents.get({ TableName: viewsTable, Key: { id: productId } });
    for (const { shard, version, stock: seen } of Item ? shardsOfView(Item as ProductViewItem) : []) {
      stock.remember(productId, shard, seen, version, sentAt, 'view');
    }
    const unseen = Array.from({ length: shardCount }, (_, i) => i).filter((i) => !stock.newest(productId, i));
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

  return { read };
}
