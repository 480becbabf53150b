// The payments module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
export { paymentsOperations } from './contract';
export {
  type PaymentEvent,
  type PaymentRejection,
  type PaymentState,
  paymentDecider,
  paymentIdFor,
} from './domain';
export { type PaymentsStore, paymentsStore } from './store';
