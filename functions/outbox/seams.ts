/**
 * The outbox's seams with the CDK app (see functions/shared/seams.ts): the
 * bus the relay publishes to, and the integration events, whose list decides
 * the relay's stream mappings and filters.
 */
import { environment, text } from '../shared/seams';

export {
  INTEGRATION_EVENTS,
  type IntegrationEvent,
  SOURCES,
  streamFilterPatterns,
} from './integration-events';

export const publisherEnvironment = environment({ eventBusName: text('EVENT_BUS_NAME') });
