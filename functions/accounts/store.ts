import { createHash } from 'node:crypto';
import { dynamoEvents, fromEnvironment } from '../shared/aws';
import { AggregateStore, type EventStore } from '../shared/event-store';
import { customerDecider, ownerClaimFold } from './domain';
import { accountsEnvironment } from './seams';

export const customers = (
  tableName = fromEnvironment(accountsEnvironment).accountsTable,
  events: EventStore = dynamoEvents,
) => new AggregateStore(events, tableName, 'Customer', customerDecider);

export type CustomersStore = ReturnType<typeof customers>;

/** The claims that tie a `sub` to its one customer, in the customers' table (see `OwnerClaim`). */
export const customerOwners = (customers: CustomersStore) =>
  customers.sibling('CustomerOwner', ownerClaimFold);

export type CustomerOwnersStore = ReturnType<typeof customerOwners>;

/** The aggregate id of a sub's claim: a digest, so that any `sub` an issuer makes is a well-formed key. */
export const ownerClaimId = (sub: string) =>
  `own_${createHash('sha256').update(sub).digest('hex').slice(0, 32)}`;
