import type { Construct } from 'constructs';
import { ACCOUNTS_ROUTES, accountsEnvironment } from '../../functions/accounts/seams';
import { idempotencyEnvironment } from '../../functions/shared/seams';
import { EventSourcedService, type ServiceProps } from '../constructs/event-sourced-service';

/**
 * Customers and their credit. `GET /customers/{id}` reads the newest event
 * item, which carries the customer's state: no read model to keep.
 */
export class AccountsService extends EventSourcedService {
  constructor(scope: Construct, id: string, props: ServiceProps) {
    super(scope, id, 'accounts', props);
    const { idempotencyTable } = props;
    const api = this.addApi({
      routes: ACCOUNTS_ROUTES,
      description: 'Accounts HTTP API: register and read customers',
      environment: {
        ...accountsEnvironment.write({ accountsTable: this.events.tableName }),
        ...idempotencyEnvironment.write({ idempotencyTable: idempotencyTable.tableName }),
      },
    });
    this.events.grantReadWriteData(api);
    idempotencyTable.grantReadWriteData(api);
  }
}
