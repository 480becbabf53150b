// The accounts module's facade: what other modules may use of it (the lint rule in biome.json holds them to it).
export { accountsOperations } from './contract';
export {
  type CreditMovement,
  type CustomerEvent,
  type CustomerRejection,
  type CustomerState,
  customerDecider,
} from './domain';
export { type CustomerOwnership, customerOwnership } from './ownership';
export { type CustomersStore, customers } from './store';
