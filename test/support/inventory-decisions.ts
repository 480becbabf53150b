/** The inventory's product decisions as the tests build histories from them; a refusal fails the test. */
import {
  decideProduct,
  type Product,
  type ProductCommand,
  type ProductDecision,
  type ProductState,
} from '../../functions/inventory/domain';

function decided(command: ProductCommand, state: ProductState): ProductDecision {
  const decision = decideProduct(command, state);
  if ('rejection' in decision) throw new Error(`refused: ${decision.rejection.code}`);
  return decision;
}

/** A new product's events and the stock they put on its shards. */
export const createProduct = (command: Omit<Extract<ProductCommand, { type: 'Create' }>, 'type'>) =>
  decided({ type: 'Create', ...command }, null);

/** A restock's events and the stock they put on the product's shards. */
export const restock = (product: Product, quantity: number) =>
  decided({ type: 'Restock', quantity }, product);
