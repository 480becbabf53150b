import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CommerceStack } from '../../lib/commerce-stack';
import { STAGES, stageConfig } from '../../lib/stage-config';

/** Synthesizes a stage without bundling (the promises checked here are the template's). */
function synth(stage: string, context: Record<string, string> = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const config = stageConfig(stage, (key) => context[key]);
  return Template.fromStack(new CommerceStack(app, `Commerce-${stage}`, { config }));
}

describe.each(STAGES)('the %s stage', (stage) => {
  const template = synth(stage);

  test('every function is Node.js 22 on arm64 with tracing and JSON logs', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    expect(Object.keys(functions).length).toBeGreaterThanOrEqual(10);
    for (const fn of Object.values(functions)) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogFormat: 'JSON' },
      });
    }
  });

  test('every event table streams new images and is encrypted', () => {
    const tables = template.findResources('AWS::DynamoDB::Table', {
      Properties: { KeySchema: [{ AttributeName: 'aggregateId', KeyType: 'HASH' }, Match.anyValue()] },
    });
    expect(Object.keys(tables)).toHaveLength(4);
    for (const table of Object.values(tables)) {
      expect(table.Properties).toMatchObject({
        StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
        SSESpecification: { SSEEnabled: true },
        BillingMode: 'PAY_PER_REQUEST',
      });
    }
  });

  test('every stream mapping bisects, retries a bounded number of times and fails to a queue', () => {
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping');
    // Four projectors and the outbox relay on each of the four event tables.
    expect(Object.keys(mappings)).toHaveLength(8);
    for (const mapping of Object.values(mappings)) {
      expect(mapping.Properties).toMatchObject({
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 5,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/FailuresQueue/), 'Arn'] } },
        },
      });
    }
  });

  test('the HTTP API has every route of the contract', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (r) => r.Properties.RouteKey,
    );
    expect(routes.sort()).toEqual(
      [
        'POST /customers',
        'GET /customers/{customerId}',
        'POST /products',
        'GET /products/{productId}',
        'POST /products/{productId}/reservations',
        'DELETE /products/{productId}/reservations/{reservationId}',
        'POST /products/{productId}/restock',
        'POST /orders',
        'GET /orders/{orderId}',
        'GET /orders/{orderId}/saga',
        'GET /payments/{paymentId}',
      ].sort(),
    );
  });

  test('the saga machine has the stage’s workflow type and starts on OrderPlaced, with retries and a DLQ', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: stageConfig(stage).workflowType,
      TracingConfiguration: { Enabled: true },
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['commerce.orders'], 'detail-type': ['OrderPlaced'] },
      Targets: [
        Match.objectLike({
          RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 20 }),
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('StartFailures'), 'Arn'] } },
        }),
      ],
    });
  });

  test('the saga definition retries transient errors with jitter and never retries business outcomes', () => {
    const asl = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'statemachines', 'order-saga.asl.json'), 'utf8'),
    );
    for (const name of ['ReserveStock', 'CapturePayment', 'ConfirmOrder']) {
      const state = asl.States[name];
      expect(state.TimeoutSeconds).toBeGreaterThan(0);
      expect(state.Retry[0]).toMatchObject({ JitterStrategy: 'FULL', BackoffRate: 2 });
      for (const business of ['OutOfStock', 'PaymentDeclined', 'ConfirmationFailed', 'DeadlineExceeded']) {
        expect(state.Retry.flatMap((r: { ErrorEquals: string[] }) => r.ErrorEquals)).not.toContain(business);
      }
    }
    for (const name of ['RefundPayment', 'ReleaseStock', 'CancelOrder']) {
      expect(asl.States[name].Retry[0]).toMatchObject({ ErrorEquals: ['States.ALL'], MaxAttempts: 100 });
    }
  });

  test('the expiry sweeper runs on its schedule', () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
  });
});

describe('stage differences', () => {
  test('prod keeps its tables with point-in-time recovery; dev does neither', () => {
    const prod = synth('prod');
    const dev = synth('dev');
    for (const table of Object.values(prod.findResources('AWS::DynamoDB::Table'))) {
      expect(table.DeletionPolicy).toBe('Retain');
    }
    expect(
      Object.values(prod.findResources('AWS::DynamoDB::Table')).map(
        (t) => t.Properties.PointInTimeRecoverySpecification,
      ),
    ).toContainEqual({ PointInTimeRecoveryEnabled: true });
    for (const table of Object.values(dev.findResources('AWS::DynamoDB::Table'))) {
      expect(table.DeletionPolicy).toBe('Delete');
    }
  });

  test('context overrides of timings are checked', () => {
    expect(() => stageConfig('dev', (k) => (k === 'reservationTtlSeconds' ? '0' : undefined))).toThrow(
      /whole number/,
    );
    expect(() => stageConfig('qa')).toThrow(/unknown stage/);
    expect(
      stageConfig('dev', (k) => (k === 'reservationTtlSeconds' ? '2' : undefined)).reservationTtl.toSeconds(),
    ).toBe(2);
  });
});
