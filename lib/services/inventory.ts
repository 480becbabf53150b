import { aws_dynamodb as dynamodb, aws_events as events, aws_events_targets as targets } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import {
  EXPIRY_INDEX,
  INVENTORY_ROUTE_SCOPES,
  INVENTORY_ROUTES,
  INVENTORY_SERVICE,
  inventoryCommandEnvironment,
  inventoryViewsEnvironment,
} from '../../functions/inventory/seams';
import { idempotencyEnvironment } from '../../functions/shared/seams';
import { EventSourcedService, type ServiceProps } from '../constructs/event-sourced-service';
import { grantAppends, ViewsTable } from '../constructs/event-store-table';
import { ServiceFunction } from '../constructs/service-function';
import { addProjector, DeadLetterQueue, scheduledTarget } from '../constructs/stream-consumer';

/** Products, their sharded stock, reservations and their expiry. */
export class InventoryService extends EventSourcedService {
  readonly views: ViewsTable;
  readonly deadLetters: DeadLetterQueue;
  /** Expiry sweeps that failed to be delivered or failed every attempt (the next sweep retries their work). */
  readonly sweepFailures: DeadLetterQueue;
  /** What every function issuing inventory commands needs in its environment. */
  readonly commandEnvironment: Record<string, string>;

  constructor(scope: Construct, id: string, props: ServiceProps) {
    super(scope, id, INVENTORY_SERVICE, props);
    const { config, idempotencyTable, watchlist } = props;
    this.views = new ViewsTable(this, 'Views', config);
    // Sparse: only reservations still held carry the index's partition key.
    this.views.table.addGlobalSecondaryIndex({
      indexName: EXPIRY_INDEX.name,
      partitionKey: { name: EXPIRY_INDEX.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: EXPIRY_INDEX.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });
    this.deadLetters = new DeadLetterQueue(this, 'ProjectionFailures', config.removalPolicy, watchlist);
    this.sweepFailures = new DeadLetterQueue(this, 'SweepFailures', config.removalPolicy, watchlist);
    this.commandEnvironment = inventoryCommandEnvironment.write({
      inventoryTable: this.events.tableName,
      reservationTtlSeconds: config.reservationTtl.toSeconds(),
      unitsPerShard: config.stockUnitsPerShard,
      maxShards: config.maxStockShards,
      holdLimitPerCaller: config.holdLimitPerCaller,
    });
    const viewsEnvironment = inventoryViewsEnvironment.write({ viewsTable: this.views.table.tableName });

    const api = this.addApi({
      routes: INVENTORY_ROUTES,
      scopes: INVENTORY_ROUTE_SCOPES,
      description: 'Inventory HTTP API: products, reservations, restock',
      environment: {
        ...this.commandEnvironment,
        ...viewsEnvironment,
        ...idempotencyEnvironment.write({ idempotencyTable: idempotencyTable.tableName }),
      },
    });
    grantAppends(this.events, api);
    this.views.grantReadItems(api);
    idempotencyTable.grantReadWriteData(api);

    addProjector(this, {
      service: this.module,
      config,
      watchlist,
      events: this.events,
      views: this.views,
      deadLetters: this.deadLetters.queue,
      description: 'Projects products, stock shards and held reservations into read models',
      environment: viewsEnvironment,
    });

    const expirer = new ServiceFunction(this, 'Expirer', {
      entry: 'inventory/handlers/expirer.ts',
      service: this.module,
      kind: 'sweeper',
      config,
      watchlist,
      description: 'Expires reservations past expiresAt and gives their stock back',
      environment: { ...this.commandEnvironment, ...viewsEnvironment },
      timeout: config.expirySweepInterval,
      onFailure: this.sweepFailures.queue,
    }).fn;
    grantAppends(this.events, expirer);
    this.views.grantIndexQuery(expirer, EXPIRY_INDEX.name);
    new events.Rule(this, 'ExpirySweep', {
      description: 'Runs the reservation expiry sweeper',
      schedule: events.Schedule.rate(config.expirySweepInterval),
      targets: [new targets.LambdaFunction(expirer, scheduledTarget(this.sweepFailures.queue))],
    });
  }
}
