import type { Construct } from 'constructs';
import { PAYMENTS_ROUTES, paymentsEnvironment } from '../../functions/payments/seams';
import { EventSourcedService, type ServiceProps } from '../constructs/event-sourced-service';

/**
 * Payments captured against a customer's credit, and their refunds.
 * `GET /payments/{id}` reads the newest event item: no read model to keep.
 */
export class PaymentsService extends EventSourcedService {
  constructor(scope: Construct, id: string, props: Omit<ServiceProps, 'idempotencyTable'>) {
    super(scope, id, 'payments', props);
    const api = this.addApi({
      routes: PAYMENTS_ROUTES,
      description: 'Payments HTTP API: read payments',
      environment: paymentsEnvironment.write({ paymentsTable: this.events.tableName }),
    });
    this.events.grantReadData(api);
  }
}
