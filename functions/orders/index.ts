// The orders module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
export { ordersOperations } from './contract';
export {
  type CancellationReason,
  FINAL_FROM_VERSION,
  type Order,
  type OrderPlaced,
  type OrderRejection,
  orderDecider,
  type PendingOrder,
} from './domain';
export { PLACED_INDEX } from './seams';
export { type OrdersStore, ordersStore, SWEEP_PARTITIONS } from './store';
