import { aws_dynamodb as dynamodb, aws_events as events } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ServiceFunction } from '../constructs/service-function';
import { consumeStream, DeadLetterQueue } from '../constructs/stream-consumer';
import type { StageConfig } from '../stage-config';

/**
 * The platform's event bus, and the relay that puts every committed domain
 * event on it: each event table's stream is the outbox, so no request ever
 * writes to the table and the bus both.
 */
export class Outbox extends Construct {
  readonly bus: events.EventBus;
  readonly deadLetters: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: { config: StageConfig; eventTables: dynamodb.Table[] }) {
    super(scope, id);
    this.bus = new events.EventBus(this, 'Bus', { description: 'Domain events of the commerce platform' });
    this.deadLetters = new DeadLetterQueue(this, 'PublishFailures');
    const publisher = new ServiceFunction(this, 'Publisher', {
      entry: 'outbox/handlers/publisher.ts',
      service: 'outbox',
      kind: 'publisher',
      config: props.config,
      description: 'Relays committed events from the event tables to the bus',
      environment: { EVENT_BUS_NAME: this.bus.eventBusName },
    }).fn;
    this.bus.grantPutEventsTo(publisher);
    for (const table of props.eventTables) consumeStream(publisher, table, this.deadLetters.queue);
  }
}
