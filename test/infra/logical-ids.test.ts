import { synthStage } from './synth';

/**
 * The logical ids of every resource that holds data or history. CloudFormation
 * replaces a resource whose logical id changes: a restructured construct tree
 * that renames one of these would delete prod's table (or queue of failures
 * waiting for a redrive, or log history) on the next deploy. If this test
 * fails, keep the old id (`overrideLogicalId`, or keep the construct path), or
 * plan the migration and then update the list.
 */
const PINNED: Record<string, string[]> = {
  'AWS::DynamoDB::Table': [
    'AccountsEventsTable56869547',
    'IdempotencyC15CBC33',
    'InventoryEventsTable70DA6640',
    'InventoryViewsTableCF645F78',
    'OrdersEventsTable3912D7F4',
    'PaymentsEventsTable185D7885',
  ],
  'AWS::SQS::Queue': [
    'InventoryProjectionFailuresQueue09778C77',
    'InventorySweepFailuresQueue2A1DBC49',
    'OutboxPublishFailuresQueue2D75E3C8',
    'SagaStartFailuresQueue014B31FE',
    'SagaSweepFailuresQueue75327715',
  ],
  'AWS::Events::EventBus': ['OutboxBusB1F298D7'],
  'AWS::StepFunctions::StateMachine': ['SagaStateMachine2D1F7D68'],
  'AWS::KMS::Key': ['ObservabilityAlarmTopicKey48516DE9'],
  'AWS::Logs::LogGroup': [
    'AccountsApiLogsCB1EDF33',
    'ApiAccessLogsE9DF007D',
    'DocsApiLogs0A89F316',
    'InventoryApiLogs50803571',
    'InventoryExpirerLogs6735F1BE',
    'InventoryProjectorLogsCE60A086',
    'OrdersApiLogsE2D94E88',
    'OutboxPublisherLogs170E138F',
    'PaymentsApiLogs7C8DADFA',
    'SagaExecutionLogs02749782',
    'SagaStepsLogs8B608C04',
    'SagaSweeperLogs5203D25F',
  ],
};

describe.each(['dev', 'staging', 'prod'])('the %s stage', (stage) => {
  const resources = synthStage(stage).template.toJSON().Resources as Record<
    string,
    { Type: string; DeletionPolicy?: string; UpdateReplacePolicy?: string }
  >;
  const idsOf = (type: string) =>
    Object.entries(resources)
      .filter(([, r]) => r.Type === type)
      .map(([id]) => id)
      .sort();

  test.each(Object.keys(PINNED))('keeps the logical ids of every %s', (type) => {
    expect(idsOf(type)).toEqual(PINNED[type]);
  });

  if (stage === 'prod') {
    test('retains its tables, their history and the failures waiting for a redrive if they ever leave the template', () => {
      for (const type of ['AWS::DynamoDB::Table', 'AWS::Logs::LogGroup', 'AWS::SQS::Queue']) {
        for (const id of idsOf(type)) {
          expect([id, resources[id]?.DeletionPolicy, resources[id]?.UpdateReplacePolicy]).toEqual([
            id,
            'Retain',
            'Retain',
          ]);
        }
      }
    });
  }
});
