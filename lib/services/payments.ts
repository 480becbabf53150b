import { aws_dynamodb as dynamodb } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EventStoreTable } from '../constructs/event-store-table';
import { addRoutes } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import type { ServiceProps } from './accounts';

/**
 * Payments captured against a customer's credit, and their refunds.
 * `GET /payments/{id}` reads the newest event item: no read model to keep.
 */
export class PaymentsService extends Construct {
  readonly events: dynamodb.Table;

  constructor(scope: Construct, id: string, { config, httpApi }: Omit<ServiceProps, 'idempotencyTable'>) {
    super(scope, id);
    this.events = new EventStoreTable(this, 'Events', config).table;

    const api = new ServiceFunction(this, 'Api', {
      entry: 'payments/handlers/api.ts',
      service: 'payments',
      kind: 'api',
      config,
      description: 'Payments HTTP API: read payments',
      environment: { PAYMENTS_TABLE: this.events.tableName },
    }).fn;
    this.events.grantReadData(api);
    addRoutes(httpApi, api, ['GET /payments/{paymentId}']);
  }
}
