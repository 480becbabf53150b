import { aws_dynamodb as dynamodb } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EventStoreTable, ViewsTable } from '../constructs/event-store-table';
import { addRoutes } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import { addProjector, DeadLetterQueue } from '../constructs/stream-consumer';
import type { ServiceProps } from './accounts';

/** Payments captured against a customer's credit, and their refunds. */
export class PaymentsService extends Construct {
  readonly events: dynamodb.Table;
  readonly views: ViewsTable;
  readonly deadLetters: DeadLetterQueue;

  constructor(scope: Construct, id: string, { config, httpApi }: Omit<ServiceProps, 'idempotencyTable'>) {
    super(scope, id);
    this.events = new EventStoreTable(this, 'Events', config).table;
    this.views = new ViewsTable(this, 'Views', config);
    this.deadLetters = new DeadLetterQueue(this, 'ProjectionFailures');

    const api = new ServiceFunction(this, 'Api', {
      entry: 'payments/handlers/api.ts',
      service: 'payments',
      kind: 'api',
      config,
      description: 'Payments HTTP API: read payments',
      environment: { PAYMENTS_TABLE: this.events.tableName, VIEWS_TABLE: this.views.table.tableName },
    }).fn;
    this.events.grantReadData(api);
    this.views.grantReadItems(api);
    addRoutes(httpApi, api, ['GET /payments/{paymentId}']);

    addProjector(this, {
      service: 'payments',
      config,
      events: this.events,
      views: this.views,
      deadLetters: this.deadLetters.queue,
      description: 'Projects payments into their read model',
    });
  }
}
