import type { Caller } from '../shared/caller';
import { type CustomersStore, customerOwners, ownerClaimId } from './store';

/** A `sub`'s customer never changes once claimed, and customers are never removed: a sandbox remembers it. */
const KNOWN_OWNERS_MAX = 10_000;

/**
 * Whose customer is whose: the customer a `sub` registered (or an admin
 * registered for it), read from the sub's claim (see `OwnerClaim`) and then
 * remembered by this sandbox, so a shop caller's reads of its orders and
 * payments cost one read the first time only.
 */
export function customerOwnership(customers: CustomersStore) {
  const owners = customerOwners(customers);
  const known = new Map<string, string>();

  async function customerOf(sub: string): Promise<string | undefined> {
    const remembered = known.get(sub);
    if (remembered) return remembered;
    const customerId = (await owners.load(ownerClaimId(sub))).state?.customerId;
    if (customerId) {
      if (known.size >= KNOWN_OWNERS_MAX) known.clear();
      known.set(sub, customerId);
    }
    return customerId;
  }

  return {
    owners,
    customerOf,
    /**
     * Whether `caller` may see what belongs to `customerId`: an admin anything,
     * a shop caller only what belongs to its own customer.
     */
    async owns(caller: Caller, customerId: string): Promise<boolean> {
      if (caller.isAdmin) return true;
      return (await customerOf(caller.sub)) === customerId;
    },
  };
}

export type CustomerOwnership = ReturnType<typeof customerOwnership>;
