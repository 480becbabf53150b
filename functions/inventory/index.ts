// The inventory module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
export { inventoryCommands } from './application';
export { inventoryOperations } from './contract';
export type { KnownShard, ReservationPart } from './domain';
export { type OrderStock, shardsAfter } from './order-stock';
export { inventorySettings } from './settings';
export { inventoryStores } from './store';
