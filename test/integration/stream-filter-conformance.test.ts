import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passesFilters, rulerVerdicts } from '@commerce/local-cloud';
import { INTEGRATION_EVENTS, streamFilterPatterns } from '../../functions/outbox/integration-events';
import { FILTER_CASES } from '../support/stream-records';

/**
 * The outbox relay's stream filters as the local cloud applies them against AWS's own matcher,
 * event-ruler (Java): the local poller must let through and drop the records Lambda would. The
 * local cloud's matcher itself is checked against event-ruler in its own tests
 * (local/test/integration/event-pattern-conformance.test.ts). Needs Maven (the first time, to
 * fetch the jars) and Java 17+.
 */

describe('stream filters (Lambda FilterCriteria): the local poller agrees with AWS event-ruler', () => {
  // Lambda filters a stream record with the EventBridge pattern syntax, applied to the record as the
  // function gets it (`dynamodb.NewImage` in DynamoDB JSON): a record passes if any pattern matches.
  const filters = streamFilterPatterns(INTEGRATION_EVENTS);

  it('on the outbox relay’s filters, for records it must let through and records it must drop', () => {
    const dir = mkdtempSync(join(tmpdir(), 'event-ruler-'));
    try {
      const file = join(dir, 'stream-filters.json');
      const pairs = FILTER_CASES.flatMap((c) => filters.map((pattern) => ({ pattern, event: c.record })));
      writeFileSync(file, JSON.stringify(pairs));
      const verdicts = rulerVerdicts(file);
      const actual = FILTER_CASES.map((c, i) => ({
        name: c.name,
        ruler: verdicts.slice(i * filters.length, (i + 1) * filters.length).some(Boolean),
        local: passesFilters(filters, c.record),
      }));
      expect(actual).toEqual(FILTER_CASES.map((c) => ({ name: c.name, ruler: c.passes, local: c.passes })));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
