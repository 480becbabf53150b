import { acceptedEvents } from '../shared/decider';
import type { AppendMeta } from '../shared/event-store';
import { type Customer, customerDecider } from './domain';
import type { CustomersStore } from './store';

/** The accounts module's use cases, on its event store (DynamoDB in the functions, in memory in the unit tests). */
export function accountsUseCases(customers: CustomersStore) {
  return {
    /**
     * Registers a customer under a new id: its first event, appended with no
     * read (the append at version 0 is the guard: a repeat of the request
     * finds the customer made, see `idempotentCreation`).
     */
    async register(
      customerId: string,
      input: { name: string; email: string; creditLimitCents?: number | undefined },
      meta: AppendMeta,
    ): Promise<Customer> {
      const events = acceptedEvents(
        customerDecider.decide({ type: 'Register', customerId, ...input, now: meta.now }, null),
      );
      return (await customers.append(customerId, 0, events, null, meta))!;
    },

    /** The customer as its registration left it, and the fingerprint of the request that registered it. */
    async registration(customerId: string) {
      const first = await customers.first(customerId);
      return first?.state ? { customer: first.state, requestHash: first.requestHash } : undefined;
    },

    /** The customer as its newest event item holds it: read-your-writes, no read model. */
    async customer(customerId: string): Promise<Customer | undefined> {
      return (await customers.load(customerId)).state ?? undefined;
    },
  };
}
