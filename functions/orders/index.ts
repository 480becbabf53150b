// The orders module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
export { ordersOperations } from './contract';
export {
  beginSaga,
  type CancellationReason,
  cancel,
  confirm,
  FINAL_FROM_VERSION,
  type Order,
  orderFold,
  reserveStock,
} from './domain';
export { PLACED_INDEX } from './seams';
export { ordersStore, SWEEP_PARTITIONS } from './store';
