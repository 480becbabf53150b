import { fromEnvironment } from '../shared/aws';
import type { InventorySettings } from './application';
import { inventoryCommandEnvironment } from './seams';

export const inventorySettings = (): InventorySettings => {
  const { reservationTtlSeconds, unitsPerShard, maxShards, holdLimitPerCaller } =
    fromEnvironment(inventoryCommandEnvironment);
  return { reservationTtlSeconds, unitsPerShard, maxShards, holdLimitPerCaller };
};
