import type { Construct } from 'constructs';
import { ACCOUNTS_ROUTES, accountsEnvironment } from '../../functions/accounts/seams';
import { EventSourcedService, type ServiceProps } from '../constructs/event-sourced-service';

/**
 * Customers and their credit. `GET /customers/{id}` reads the newest event
 * item, which carries the customer's state: no read model to keep.
 */
export class AccountsService extends EventSourcedService {
  constructor(scope: Construct, id: string, props: Omit<ServiceProps, 'idempotencyTable'>) {
    super(scope, id, 'accounts', props);
    const api = this.addApi({
      routes: ACCOUNTS_ROUTES,
      description: 'Accounts HTTP API: register and read customers',
      // A keyed registration is made idempotent in the events table itself (idempotentCreation).
      environment: accountsEnvironment.write({ accountsTable: this.events.tableName }),
    });
    this.events.grantReadWriteData(api);
  }
}
