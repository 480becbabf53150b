import { aws_apigatewayv2 as apigw, aws_dynamodb as dynamodb } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EventStoreTable } from '../constructs/event-store-table';
import { addRoutes } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import type { StageConfig } from '../stage-config';

export interface ServiceProps {
  readonly config: StageConfig;
  readonly httpApi: apigw.HttpApi;
  readonly idempotencyTable: dynamodb.Table;
}

/**
 * Customers and their credit. `GET /customers/{id}` reads the newest event
 * item, which carries the customer's state: no read model to keep.
 */
export class AccountsService extends Construct {
  readonly events: dynamodb.Table;

  constructor(scope: Construct, id: string, { config, httpApi, idempotencyTable }: ServiceProps) {
    super(scope, id);
    this.events = new EventStoreTable(this, 'Events', config).table;

    const api = new ServiceFunction(this, 'Api', {
      entry: 'accounts/handlers/api.ts',
      service: 'accounts',
      kind: 'api',
      config,
      description: 'Accounts HTTP API: register and read customers',
      environment: {
        ACCOUNTS_TABLE: this.events.tableName,
        IDEMPOTENCY_TABLE: idempotencyTable.tableName,
      },
    }).fn;
    this.events.grantReadWriteData(api);
    idempotencyTable.grantReadWriteData(api);
    addRoutes(httpApi, api, ['POST /customers', 'GET /customers/{customerId}']);
  }
}
