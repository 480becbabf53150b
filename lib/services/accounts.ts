import { aws_apigatewayv2 as apigw, aws_dynamodb as dynamodb } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EventStoreTable, ViewsTable } from '../constructs/event-store-table';
import { addRoutes } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import { addProjector, DeadLetterQueue } from '../constructs/stream-consumer';
import type { StageConfig } from '../stage-config';

export interface ServiceProps {
  readonly config: StageConfig;
  readonly httpApi: apigw.HttpApi;
  readonly idempotencyTable: dynamodb.Table;
}

/** Customers and their credit. */
export class AccountsService extends Construct {
  readonly events: dynamodb.Table;
  readonly views: ViewsTable;
  readonly deadLetters: DeadLetterQueue;

  constructor(scope: Construct, id: string, { config, httpApi, idempotencyTable }: ServiceProps) {
    super(scope, id);
    this.events = new EventStoreTable(this, 'Events', config).table;
    this.views = new ViewsTable(this, 'Views', config);
    this.deadLetters = new DeadLetterQueue(this, 'ProjectionFailures');

    const api = new ServiceFunction(this, 'Api', {
      entry: 'accounts/handlers/api.ts',
      service: 'accounts',
      kind: 'api',
      config,
      description: 'Accounts HTTP API: register and read customers',
      environment: {
        ACCOUNTS_TABLE: this.events.tableName,
        VIEWS_TABLE: this.views.table.tableName,
        IDEMPOTENCY_TABLE: idempotencyTable.tableName,
      },
    }).fn;
    this.events.grantReadWriteData(api);
    this.views.grantReadItems(api);
    idempotencyTable.grantReadWriteData(api);
    addRoutes(httpApi, api, ['POST /customers', 'GET /customers/{customerId}']);

    addProjector(this, {
      service: 'accounts',
      config,
      events: this.events,
      views: this.views,
      deadLetters: this.deadLetters.queue,
      description: 'Projects customers into their read model',
    });
  }
}
