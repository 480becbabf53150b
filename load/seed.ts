/**
 * Sample data for the profiles: N customers with plenty of credit and N
 * products with plenty of stock, created through the API of the target, and
 * their ids written to a seed file the profiles (and the invariant checks)
 * read. The seed records what it created with — the stock is what the
 * products have ever received, since the profiles never restock.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mapPool, request, type Target } from './target';

export interface Seed {
  readonly target: string;
  readonly createdAt: string;
  readonly customers: readonly { customerId: string; creditLimitCents: number }[];
  readonly products: readonly { productId: string; priceCents: number; stock: number }[];
}

export interface SeedOptions {
  readonly customers: number;
  readonly products: number;
  /** Units per product: enough that the mix's orders and reservations do not run it out. */
  readonly stock: number;
  readonly creditLimitCents: number;
}

export const DEFAULT_SEED: SeedOptions = {
  customers: 100,
  products: 100,
  stock: 10_000,
  // $10M each: a mix run places a few hundred orders of a few tens of dollars per customer.
  creditLimitCents: 1_000_000_000,
};

async function created<T>(target: Target, path: string, body: unknown): Promise<T> {
  const r = await request<T>(target, 'POST', path, body);
  if (r.status !== 201)
    throw new Error(`seeding failed: POST ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function seed(target: Target, options: SeedOptions): Promise<Seed> {
  const run = randomUUID().slice(0, 8);
  const customers = await mapPool([...Array(options.customers).keys()], 8, async (i) => {
    const c = await created<{ customerId: string; creditLimitCents: number }>(target, '/customers', {
      name: `Seed customer ${i}`,
      email: `seed-${run}-${i}@example.com`,
      creditLimitCents: options.creditLimitCents,
    });
    return { customerId: c.customerId, creditLimitCents: c.creditLimitCents };
  });
  const products = await mapPool([...Array(options.products).keys()], 8, async (i) => {
    const priceCents = 100 + ((i * 37) % 50) * 100;
    const p = await created<{ productId: string }>(target, '/products', {
      sku: `SEED-${run}-${i}`,
      name: `Seed product ${i}`,
      priceCents,
      stock: options.stock,
    });
    return { productId: p.productId, priceCents, stock: options.stock };
  });
  return { target: target.api, createdAt: new Date().toISOString(), customers, products };
}

export const writeSeed = (file: string, s: Seed) => writeFileSync(file, `${JSON.stringify(s, null, 2)}\n`);
export const readSeed = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Seed;
