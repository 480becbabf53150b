import type { Construct } from 'constructs';
import { accountsEnvironment } from '../../functions/accounts/seams';
import { PAYMENTS_ROUTE_SCOPES, PAYMENTS_ROUTES, paymentsEnvironment } from '../../functions/payments/seams';
import { EventSourcedService, type ServiceProps } from '../constructs/event-sourced-service';
import { grantItemReads } from '../constructs/event-store-table';
import type { AccountsService } from './accounts';

/**
 * Payments captured against a customer's credit, and their refunds.
 * `GET /payments/{id}` reads the newest event item: no read model to keep.
 */
export class PaymentsService extends EventSourcedService {
  constructor(
    scope: Construct,
    id: string,
    props: Omit<ServiceProps, 'idempotencyTable'> & { readonly accounts: AccountsService },
  ) {
    super(scope, id, 'payments', props);
    const { accounts } = props;
    const api = this.addApi({
      routes: PAYMENTS_ROUTES,
      scopes: PAYMENTS_ROUTE_SCOPES,
      description: 'Payments HTTP API: read payments',
      environment: {
        ...paymentsEnvironment.write({ paymentsTable: this.events.tableName }),
        ...accountsEnvironment.write({ accountsTable: accounts.events.tableName }),
      },
    });
    grantItemReads(this.events, api);
    // A shop caller reads only its own payments: whose customer it is, from the accounts' store.
    grantItemReads(accounts.events, api);
  }
}
