// The accounts module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
export { accountsOperations } from './contract';
export { captureCredit, refundCredit } from './domain';
export { customers } from './store';
