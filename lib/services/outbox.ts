import { aws_dynamodb as dynamodb, aws_events as events } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  INTEGRATION_EVENTS,
  type IntegrationEvent,
  publisherEnvironment,
  streamFilterPatterns,
} from '../../functions/outbox/seams';
import { ServiceFunction } from '../constructs/service-function';
import { consumeStream, DeadLetterQueue } from '../constructs/stream-consumer';
import type { Watchlist } from '../observability/watchlist';
import type { StageConfig } from '../stage-config';

/**
 * The platform's event bus, and the relay that puts the integration events
 * (functions/outbox/integration-events.ts, through the module's seams: the events some rule subscribes
 * to) on it: each event table's stream is the outbox, so no request ever
 * writes to the table and the bus both. The relay reads only the tables that
 * hold an integration event, through a stream filter that lets only those
 * events through: the others never invoke it.
 */
export class Outbox extends Construct {
  readonly bus: events.EventBus;
  readonly deadLetters: DeadLetterQueue;

  constructor(
    scope: Construct,
    id: string,
    props: {
      config: StageConfig;
      watchlist: Watchlist;
      /** The event table of each aggregate type. */
      eventTables: Readonly<Record<string, dynamodb.Table>>;
    },
  ) {
    super(scope, id);
    this.bus = new events.EventBus(this, 'Bus', { description: 'Domain events of the commerce platform' });
    this.deadLetters = new DeadLetterQueue(
      this,
      'PublishFailures',
      props.config.removalPolicy,
      props.watchlist,
    );
    const publisher = new ServiceFunction(this, 'Publisher', {
      entry: 'outbox/handlers/publisher.ts',
      service: 'outbox',
      kind: 'publisher',
      config: props.config,
      watchlist: props.watchlist,
      description: 'Relays committed events from the event tables to the bus',
      environment: publisherEnvironment.write({ eventBusName: this.bus.eventBusName }),
    });
    this.bus.grantPutEventsTo(publisher.fn);
    const eventsByTable = new Map<dynamodb.Table, IntegrationEvent[]>();
    for (const event of INTEGRATION_EVENTS) {
      const table = props.eventTables[event.aggregateType];
      if (!table)
        throw new Error(`integration event ${event.type}: no event table for ${event.aggregateType}`);
      eventsByTable.set(table, [...(eventsByTable.get(table) ?? []), event]);
    }
    for (const [table, events] of eventsByTable) {
      consumeStream(publisher, table, this.deadLetters.queue, streamFilterPatterns(events));
    }
  }
}
