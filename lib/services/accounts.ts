import type { Construct } from 'constructs';
import { ACCOUNTS_ROUTE_SCOPES, ACCOUNTS_ROUTES, accountsEnvironment } from '../../functions/accounts/seams';
import { EventSourcedService, type ServiceProps } from '../constructs/event-sourced-service';
import { grantAppends } from '../constructs/event-store-table';

/**
 * Customers and their credit. `GET /customers/{id}` reads the newest event
 * item, which carries the customer's state: no read model to keep.
 */
export class AccountsService extends EventSourcedService {
  constructor(scope: Construct, id: string, props: Omit<ServiceProps, 'idempotencyTable'>) {
    super(scope, id, 'accounts', props);
    const api = this.addApi({
      routes: ACCOUNTS_ROUTES,
      scopes: ACCOUNTS_ROUTE_SCOPES,
      description: 'Accounts HTTP API: register and read customers',
      // A keyed registration is made idempotent in the events table itself (idempotentCreation).
      environment: accountsEnvironment.write({ accountsTable: this.events.tableName }),
    });
    // Appends only: a customer's events, and the claim that makes one customer per `sub` (see store.ts).
    grantAppends(this.events, api);
  }
}
