import { aws_dynamodb as dynamodb, aws_iam as iam } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { acknowledgeCheckov } from '../checkov';
import type { StageConfig } from '../stage-config';

/** The Checkov findings every table of the platform acknowledges, with their reasons. */
export function acknowledgeTableFindings(table: dynamodb.Table, config: StageConfig) {
  acknowledgeCheckov(
    table,
    'CKV_AWS_119',
    'encrypted at rest with the AWS managed key (aws/dynamodb); a customer-managed key would add a key and its per-request cost on the hot path, and no requirement here asks for one',
  );
  if (!config.pointInTimeRecovery) {
    acknowledgeCheckov(
      table,
      'CKV_AWS_28',
      `the ${config.stage} stage keeps no backups: its data is disposable; the stages that keep data enable point-in-time recovery (stage-config.ts)`,
    );
  }
}

/**
 * A service's event store: partition key the aggregate id, sort key the
 * version, and a stream of new images that is the service's outbox.
 */
export class EventStoreTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, config: StageConfig) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: 'aggregateId', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'version', type: dynamodb.AttributeType.NUMBER },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      stream: dynamodb.StreamViewType.NEW_IMAGE,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: config.pointInTimeRecovery },
      deletionProtection: config.tableDeletionProtection,
      removalPolicy: config.removalPolicy,
    });
    acknowledgeTableFindings(this.table, config);
  }
}

const ITEM_READS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
];
/**
 * What appending to an event store takes: a conditional `PutItem` of a new
 * item, alone or in a `TransactWriteItems` (whose `Put` and `ConditionCheck`
 * items IAM authorizes as `PutItem` and `ConditionCheckItem`, the latter among
 * the reads). No `UpdateItem`, `DeleteItem` or `BatchWriteItem`: an event, once
 * written, is never changed or removed by a function.
 */
const ITEM_APPENDS = ['dynamodb:PutItem'];

/**
 * Grants on a table's items only. The CDK's `grantReadData` of a table with
 * an index also grants every index (`index/*`); these leave a sparse index
 * to the one function that queries it.
 */
export const grantItemReads = (table: dynamodb.ITable, grantee: iam.IGrantable) =>
  iam.Grant.addToPrincipal({ grantee, actions: ITEM_READS, resourceArns: [table.tableArn] });

/** Reads and appends of an event store's items: append-only (see `ITEM_APPENDS`). */
export const grantAppends = (table: dynamodb.ITable, grantee: iam.IGrantable) =>
  iam.Grant.addToPrincipal({
    grantee,
    actions: [...ITEM_READS, ...ITEM_APPENDS],
    resourceArns: [table.tableArn],
  });

/**
 * A service's read models, keyed by `id`, written only by its projector.
 * Its grants name the table, or one index of it, never `index/*`: a reader
 * of items cannot query the sweepers' indexes, and a sweeper only its own.
 */
export class ViewsTable extends Construct {
  readonly table: dynamodb.Table;

  /** Reads of view items by key (a GET). */
  grantReadItems(grantee: iam.IGrantable) {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:DescribeTable'],
      resourceArns: [this.table.tableArn],
    });
  }

  /** What a projector does: read a view and write it under its version guard. */
  grantProjection(grantee: iam.IGrantable) {
    this.grantReadItems(grantee);
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      resourceArns: [this.table.tableArn],
    });
  }

  /** Queries of one index (a sweeper's). */
  grantIndexQuery(grantee: iam.IGrantable, indexName: string) {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:Query'],
      resourceArns: [`${this.table.tableArn}/index/${indexName}`],
    });
  }

  constructor(scope: Construct, id: string, config: StageConfig) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: config.pointInTimeRecovery },
      deletionProtection: config.tableDeletionProtection,
      // A read model can always be rebuilt from the events.
      removalPolicy: config.removalPolicy,
    });
    acknowledgeTableFindings(this.table, config);
  }
}
