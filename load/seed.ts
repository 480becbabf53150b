/**
 * Sample data for the profiles: N customers with plenty of credit and N
 * products with plenty of stock (and, when asked, the edges: a few scarce
 * products and customers with about one order's credit), created through the API of the target, and
 * their ids written to a seed file the profiles (and the invariant checks)
 * read. The seed records what it created with — the stock is what the
 * products have ever received, since the profiles never restock.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import createClient from 'openapi-fetch';
import type { components, paths } from '../openapi/schema';
import { mapPool, retryAfterMs, sleep, type Target, THROTTLED_ATTEMPTS } from './target';
import { tokensFor } from './tokens';

export interface Seed {
  readonly target: string;
  readonly createdAt: string;
  /**
   * Each customer belongs to `sub` (its `ownerSub`): the caller whose shop token acts for it; without
   * one (a seed written before tokens, or a customer no shop caller owns) the operator acts for it.
   */
  readonly customers: readonly { customerId: string; creditLimitCents: number; sub?: string }[];
  readonly products: readonly { productId: string; priceCents: number; stock: number }[];
}

export interface SeedOptions {
  readonly customers: number;
  readonly products: number;
  /** Units per product: enough that the mix's orders and reservations do not run it out. */
  readonly stock: number;
  readonly creditLimitCents: number;
  /**
   * The edges: the first `products` products get only `stock` units, so that
   * many orders contend for the last one and some are cancelled OUT_OF_STOCK.
   */
  readonly scarce?: { readonly products: number; readonly stock: number };
  /**
   * The first `customers` customers get a limit of `creditLimitCents` (about
   * one order), so that the limit is reached and orders past it are cancelled
   * PAYMENT_DECLINED, their stock released by compensation.
   */
  readonly tight?: { readonly customers: number; readonly creditLimitCents: number };
}

export const DEFAULT_SEED: SeedOptions = {
  customers: 100,
  products: 100,
  stock: 10_000,
  // $10M each: a mix run places a few hundred orders of a few tens of dollars per customer.
  creditLimitCents: 1_000_000_000,
};

/**
 * The API's typed client, generated from its OpenAPI document (openapi/schema.d.ts): a contract change
 * that breaks the seeding fails the build. A request that got no answer is sent again (its
 * Idempotency-Key makes the repeat answer the first response), four times, with growing pauses; one
 * refused for load (429) is sent again after its Retry-After.
 */
function apiClient(target: Target) {
  const api = createClient<paths>({ baseUrl: target.api, fetch: fetchWithRetries });
  // As the operator: only an admin token may create products, set a credit limit or name a record's owner.
  api.use({
    onRequest: async ({ request }) => {
      request.headers.set('authorization', `Bearer ${await tokensFor(target).admin()}`);
      return request;
    },
  });
  return api;
}

async function fetchWithRetries(request: Request): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(request.clone(), { signal: AbortSignal.timeout(15_000) });
      // Refused for load (a cloud just started is still warming its sandboxes): sent again when it says.
      if (response.status === 429 && attempt < THROTTLED_ATTEMPTS) {
        await sleep(retryAfterMs(response));
        continue;
      }
      return response;
    } catch (error) {
      if (attempt >= 5) throw new Error(`${request.method} ${request.url}: ${(error as Error).message}`);
      await sleep(2000 * attempt);
    }
  }
}

/**
 * A request body of the document, named: openapi-fetch infers a body's type from the call, which
 * lets a field the contract no longer has pass; `satisfies` this makes it an error too.
 */
type Body<Name extends keyof components['schemas']> = components['schemas'][Name];

function created<T>(what: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined || answer.response.status !== 201) {
    throw new Error(`seeding failed: ${what} → ${answer.response.status} ${JSON.stringify(answer.error)}`);
  }
  return answer.data;
}

export async function seed(target: Target, options: SeedOptions): Promise<Seed> {
  const api = apiClient(target);
  const run = randomUUID().slice(0, 8);
  // Each seeded customer is a caller of its own (its sub), whose shop token places its orders; the
  // operator creates it for that sub, as only an admin may give it the credit the profiles spend.
  const callers = await tokensFor(target).shopCallers(options.customers, `seed-${run}`);
  const customers = await mapPool([...callers.keys()], 8, async (i) => {
    const { sub } = callers[i]!;
    const tight = i < (options.tight?.customers ?? 0);
    const body: Body<'RegisterCustomer'> & { ownerSub?: string } = {
      name: `Seed customer ${i}`,
      email: `seed-${run}-${i}@example.com`,
      creditLimitCents: tight ? options.tight!.creditLimitCents : options.creditLimitCents,
      ownerSub: sub,
    };
    const c = created(
      'POST /customers',
      await api.POST('/customers', {
        params: { header: { 'Idempotency-Key': `seed-${run}-customer-${i}` } },
        body,
      }),
    );
    return { customerId: c.customerId, creditLimitCents: c.creditLimitCents, sub };
  });
  const products = await mapPool([...Array(options.products).keys()], 8, async (i) => {
    const priceCents = 100 + ((i * 37) % 50) * 100;
    const stock = i < (options.scarce?.products ?? 0) ? options.scarce!.stock : options.stock;
    const p = created(
      'POST /products',
      await api.POST('/products', {
        params: { header: { 'Idempotency-Key': `seed-${run}-product-${i}` } },
        body: {
          sku: `SEED-${run}-${i}`,
          name: `Seed product ${i}`,
          priceCents,
          stock,
        } satisfies Body<'CreateProduct'>,
      }),
    );
    return { productId: p.productId, priceCents, stock };
  });
  return { target: target.api, createdAt: new Date().toISOString(), customers, products };
}

export const writeSeed = (file: string, s: Seed) => writeFileSync(file, `${JSON.stringify(s, null, 2)}\n`);

/**
 * The columns of the seed's Artillery payload (the CSV `load/*.yml` read, all rows at once as `seeded`):
 * row i names the i-th customer (its id and the `sub` that owns it) and the i-th product; a column runs
 * out (is empty) when there are fewer of one than of the other.
 */
export const PAYLOAD_FIELDS = ['customerId', 'sub', 'productId'] as const;

/** The seed as Artillery's payload CSV, with a header row (the scripts skip it). */
export function payloadCsv(s: Seed): string {
  const rows = Array.from({ length: Math.max(s.customers.length, s.products.length) }, (_, i) => [
    s.customers[i]?.customerId ?? '',
    s.customers[i]?.sub ?? '',
    s.products[i]?.productId ?? '',
  ]);
  for (const value of rows.flat())
    if (/[",\r\n]/.test(value))
      throw new Error(`a seeded id cannot go into the payload CSV as it is: ${value}`);
  return `${[PAYLOAD_FIELDS, ...rows].map((row) => row.join(',')).join('\n')}\n`;
}

export const writePayload = (file: string, s: Seed) => writeFileSync(file, payloadCsv(s));
export const readSeed = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Seed;
