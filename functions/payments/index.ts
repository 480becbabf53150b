// The payments module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
export { paymentUndoing } from './commands';
export { paymentsOperations } from './contract';
export { paymentIdFor, settle } from './domain';
export { paymentsStore } from './store';
