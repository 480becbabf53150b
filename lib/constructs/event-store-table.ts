import { aws_dynamodb as dynamodb } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { StageConfig } from '../stage-config';

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
      removalPolicy: config.removalPolicy,
    });
  }
}

/** A service's read models, keyed by `id`, written only by its projector. */
export class ViewsTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, config: StageConfig) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: config.pointInTimeRecovery },
      // A read model can always be rebuilt from the events.
      removalPolicy: config.removalPolicy,
    });
  }
}
