import type { Caller } from '../shared/caller';
import { acceptedEvents } from '../shared/decider';
import { ConcurrencyError } from '../shared/errors';
import type { AppendMeta } from '../shared/event-store';
import { type Customer, type CustomerProfile, customerDecider, ownerClaimed, profileOf } from './domain';
import { type CustomerOwnership, customerOwnership } from './ownership';
import { type CustomersStore, ownerClaimId } from './store';

/** A registration for a `sub` that already has its customer (one customer per sub). */
export class CustomerExists extends Error {
  constructor(readonly ownerSub: string) {
    super('the caller already has a customer record');
    this.name = 'CustomerExists';
  }
}

/** What registering a customer takes. */
export interface Registration {
  readonly name: string;
  readonly email: string;
  readonly creditLimitCents?: number | undefined;
  readonly ownerSub?: string | undefined;
}

/** The fields of a registration only an admin may set. */
const ADMIN_FIELDS = ['creditLimitCents', 'ownerSub'] as const;

/**
 * Who a registration is for, as `caller` may ask it: an admin registers
 * anyone, with any credit limit, for the `ownerSub` it names (or for no shop
 * caller); a shop caller registers itself, with the default limit. Refused
 * (the fields it may not set) when a shop caller sets an admin's field.
 */
export function registrationFor(
  caller: Caller,
  input: Registration,
): { readonly ok: Registration } | { readonly forbidden: readonly string[] } {
  if (caller.isAdmin) return { ok: input };
  const forbidden = ADMIN_FIELDS.filter((field) => input[field] !== undefined);
  if (forbidden.length > 0) return { forbidden };
  return { ok: { ...input, ownerSub: caller.sub } };
}

/** A customer as its routes answer it: its credit, and the name and email its registration recorded. */
export type CustomerRecord = Customer & CustomerProfile;

/** The accounts module's use cases, on its event store (DynamoDB in the functions, in memory in the unit tests). */
export function accountsUseCases(
  customers: CustomersStore,
  ownership: CustomerOwnership = customerOwnership(customers),
) {
  /**
   * The customer as its newest event item holds it (read-your-writes, no read
   * model), with the profile of its first: two reads, sent together.
   */
  async function customer(customerId: string): Promise<CustomerRecord | undefined> {
    const [{ state }, first] = await Promise.all([customers.load(customerId), customers.first(customerId)]);
    const profile = first && profileOf(first.event);
    return state && profile ? { ...state, ...profile } : undefined;
  }

  return {
    /**
     * Registers a customer under a new id: its first event, appended with no
     * read (the append at version 0 is the guard: a repeat of the request
     * finds the customer made, see `idempotentCreation`). A customer that
     * belongs to a `sub` is appended in one transaction with the sub's claim,
     * whose first append is the guard of one customer per sub: a second
     * registration of the sub is refused (`CustomerExists`), never written.
     */
    async register(
      customerId: string,
      input: {
        name: string;
        email: string;
        creditLimitCents?: number | undefined;
        ownerSub?: string | undefined;
      },
      meta: AppendMeta,
    ): Promise<CustomerRecord> {
      const events = acceptedEvents(
        customerDecider.decide({ type: 'Register', customerId, ...input, now: meta.now }, null),
      );
      const customer = customers.pending(customerId, 0, events, null, meta);
      const { ownerSub, name, email } = input;
      if (ownerSub === undefined)
        return { ...(await customers.append(customerId, 0, events, null, meta))!, name, email };
      const claimId = ownerClaimId(ownerSub);
      try {
        await customers.write([
          customer,
          ownership.owners.pending(claimId, 0, [ownerClaimed(customerId)], null, meta),
        ]);
      } catch (error) {
        // The sub's claim exists and this customer does not: another registration of the sub made it.
        if (
          error instanceof ConcurrencyError &&
          error.existing.includes(claimId) &&
          !error.existing.includes(customerId)
        )
          throw new CustomerExists(ownerSub);
        throw error;
      }
      return { ...customerDecider.evolve(null, events[0]!)!, name, email };
    },

    /** The customer as its registration left it, and the fingerprint of the request that registered it. */
    async registration(customerId: string) {
      const first = await customers.first(customerId);
      const profile = first && profileOf(first.event);
      return first?.state && profile
        ? { customer: { ...first.state, ...profile }, requestHash: first.requestHash }
        : undefined;
    },

    customer,

    /** The customer that belongs to `sub`, if it registered (or an admin registered one for it). */
    async customerOwnedBy(sub: string): Promise<CustomerRecord | undefined> {
      const customerId = await ownership.customerOf(sub);
      return customerId === undefined ? undefined : customer(customerId);
    },
  };
}
