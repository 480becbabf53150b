// The inventory module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
export { inventoryCommands, type OrderStock, shardsAfter } from './application';
export { inventoryOperations } from './contract';
export type { KnownShard, ReservationPart } from './domain';
export { inventorySettings } from './settings';
export { inventoryStores } from './store';
