import { referencedIds, removeSynthesized, resourcesOf, synthStage } from './synth';

/**
 * The alarms watch what the constructs registered on the stack's watchlist
 * (lib/observability/watchlist.ts), not what a walk of the tree finds: these
 * hold that nothing of the template escaped registration.
 */
const resources = resourcesOf(synthStage('dev').template);
afterAll(removeSynthesized);
const idsOf = (type: string) =>
  Object.entries(resources)
    .filter(([, r]) => r.Type === type)
    .map(([id]) => id)
    .sort();

/** The logical ids the alarms on `metricName` watch, through their dimensions. */
const watchedBy = (metricName: string) =>
  Object.values(resources)
    .filter((r) => r.Type === 'AWS::CloudWatch::Alarm' && r.Properties?.MetricName === metricName)
    .flatMap((r) => [...referencedIds(r.Properties?.Dimensions)])
    .sort();

test('every function has a throttles alarm', () => {
  expect(watchedBy('Throttles')).toEqual(idsOf('AWS::Lambda::Function'));
});

test('every function fed by a stream has an iterator-age alarm', () => {
  const consumers = Object.values(resources)
    .filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping')
    .flatMap((r) => [...referencedIds(r.Properties?.FunctionName)]);
  expect(consumers.length).toBeGreaterThan(0);
  expect(watchedBy('IteratorAge')).toEqual([...new Set(consumers)].sort());
});

test('every queue (each one is a dead-letter queue) has an alarm on its waiting messages', () => {
  expect(watchedBy('ApproximateNumberOfMessagesVisible')).toEqual(idsOf('AWS::SQS::Queue'));
});
