import { env } from '../shared/aws';
import type { InventorySettings } from './application';

export const inventorySettings = (): InventorySettings => ({
  reservationTtlSeconds: Number(env('RESERVATION_TTL_SECONDS')),
  unitsPerShard: Number(env('STOCK_UNITS_PER_SHARD')),
  maxShards: Number(env('MAX_STOCK_SHARDS')),
});
