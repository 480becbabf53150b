import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, RemovalPolicy, Stack, aws_sns as sns } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { STAGE_SETTINGS } from '../../config/stages';
import { INTEGRATION_EVENTS, SOURCES, streamFilterPatterns } from '../../functions/outbox/integration-events';
import { addNagChecks } from '../../lib/nag';
import {
  type FunctionKind,
  STAGE_CONFIGS,
  STAGES,
  type StageConfig,
  stageConfig,
} from '../../lib/stage-config';
import { isPlaceholder, type StageSettings, type StageSettingsFile } from '../../lib/stage-settings';
import {
  PROD_ISSUER,
  type Resources,
  referencedIds,
  removeSynthesized,
  resourcesOf,
  synthStage,
  TEST_SETTINGS,
  UNVALIDATED,
} from './synth';

afterAll(removeSynthesized);

/** Each stage synthesized once for this file, as `cdk synth -c stage=...` does (cdk-nag included), without bundling. */
const synthesized = new Map<string, ReturnType<typeof synthStage>>();
const synthesizedStage = (stage: string) => {
  if (!synthesized.has(stage)) synthesized.set(stage, synthStage(stage));
  return synthesized.get(stage)!;
};
const synth = (stage: string) => synthesizedStage(stage).template;

describe.each(STAGES)('the %s stage', (stage) => {
  const template = synth(stage);

  test('every function is Node.js 22 on arm64 with tracing and JSON logs', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    expect(Object.keys(functions).length).toBe(10);
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
    // The inventory projector, and the outbox relay on the one table holding an integration event (orders).
    expect(Object.keys(mappings)).toHaveLength(2);
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

  test('the outbox relay reads only the tables of integration events, filtered to those events', () => {
    const relayMappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) => JSON.stringify(m.Properties.FunctionName).includes('OutboxPublisher'),
    );
    expect(relayMappings).toHaveLength(1);
    const [relay] = relayMappings;
    expect(relay!.Properties.EventSourceArn).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^OrdersEventsTable/), 'StreamArn'],
    });
    const patterns = (relay!.Properties.FilterCriteria.Filters as { Pattern: string }[]).map((f) =>
      JSON.parse(f.Pattern),
    );
    expect(patterns).toEqual(streamFilterPatterns(INTEGRATION_EVENTS));
    expect(patterns).toEqual([
      {
        eventName: ['INSERT'],
        dynamodb: { NewImage: { aggregateType: { S: ['Order'] }, type: { S: ['OrderPlaced'] } } },
      },
    ]);
    // Every other mapping (the projectors') gets every record.
    for (const m of Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))) {
      if (m !== relay) expect(m.Properties.FilterCriteria).toBeUndefined();
    }
  });

  test('an event goes on the bus exactly when a rule subscribes to it', () => {
    const subscribed = new Set<string>();
    for (const rule of Object.values(template.findResources('AWS::Events::Rule'))) {
      const pattern = rule.Properties.EventPattern as
        | { source?: string[]; 'detail-type'?: string[] }
        | undefined;
      if (!pattern) continue; // a scheduled rule
      for (const source of pattern.source ?? []) {
        for (const detailType of pattern['detail-type'] ?? []) subscribed.add(`${source} ${detailType}`);
      }
    }
    const published = INTEGRATION_EVENTS.map((e) => `${SOURCES[e.aggregateType]} ${e.type}`);
    expect([...subscribed].sort()).toEqual([...new Set(published)].sort());
  });

  test('the HTTP API has every route of the contract', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (r) => r.Properties.RouteKey,
    );
    expect(routes.sort()).toEqual(
      [
        'POST /customers',
        'GET /customers/{customerId}',
        'GET /customers/me',
        'POST /products',
        'GET /products/{productId}',
        'POST /products/{productId}/reservations',
        'DELETE /products/{productId}/reservations/{reservationId}',
        'POST /products/{productId}/restock',
        'POST /orders',
        'GET /orders/{orderId}',
        'GET /orders/{orderId}/saga',
        'GET /payments/{paymentId}',
        'GET /openapi.json',
        'GET /docs',
      ].sort(),
    );
  });

  test('the orders API outlasts the longest Prefer: wait (10 s) plus placing the order, within API Gateway’s 30 s', () => {
    const [ordersApi, ...others] = Object.values(
      template.findResources('AWS::Lambda::Function', {
        Properties: { Description: 'Orders HTTP API: place and read orders' },
      }),
    );
    expect(others).toEqual([]);
    // The handler also keeps a second of its time for the last read and the answer.
    expect(ordersApi!.Properties.Timeout).toBeGreaterThanOrEqual(10 + 1 + 2);
    expect(ordersApi!.Properties.Timeout).toBeLessThan(30);
    for (const integration of Object.values(template.findResources('AWS::ApiGatewayV2::Integration'))) {
      expect(integration.Properties.TimeoutInMillis ?? 30_000).toBe(30_000);
    }
  });

  test('the saga machine has the stage’s workflow type and starts on OrderPlaced, with retries and a DLQ', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: STAGE_CONFIGS[stage].workflowType,
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
    // The compensation is one step, retried until it lands.
    expect(asl.States.CancelOrder.Retry[0]).toMatchObject({ ErrorEquals: ['States.ALL'], MaxAttempts: 100 });
    // Every failure a step's Catch takes names its reason, then goes to it (ClaimedAlready's, a read that
    // keeps failing, leaves the decision to ReserveStock: see saga-contract.test.ts).
    const catches = Object.values(asl.States)
      .filter((s) => (s as { Resource?: string }).Resource === 'arn:aws:states:::lambda:invoke')
      .flatMap((s) => (s as { Catch?: { Next: string }[] }).Catch ?? []);
    expect(catches.length).toBeGreaterThan(0);
    for (const c of catches) {
      expect(asl.States[c.Next]).toMatchObject({
        Type: 'Pass',
        ResultPath: '$.cancellation',
        Next: 'CancelOrder',
      });
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

/** Durations and removal policies made readable, so that the snapshot shows what a reviewer must see. */
const printable = (value: unknown): unknown => {
  if (value instanceof Duration) return value.toHumanString();
  if (Array.isArray(value)) return value.map(printable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, printable(v)]));
  }
  return value;
};

describe('stage config', () => {
  test('every stage’s config is as reviewed (snapshot)', () => {
    expect(printable(STAGE_CONFIGS)).toMatchSnapshot();
  });

  test('the stages differ where they must', () => {
    const [dev, staging, prod] = STAGES.map((stage) => stageConfig(stage, undefined, TEST_SETTINGS)) as [
      StageConfig,
      StageConfig,
      StageConfig,
    ];
    expect([dev.workflowType, staging.workflowType, prod.workflowType]).toEqual([
      'STANDARD',
      'EXPRESS',
      'STANDARD',
    ]);
    expect(dev.logRetentionDays).toBeLessThan(staging.logRetentionDays);
    expect(staging.logRetentionDays).toBeLessThan(prod.logRetentionDays);
    expect([dev.pointInTimeRecovery, prod.pointInTimeRecovery]).toEqual([false, true]);
    expect([dev.removalPolicy, prod.removalPolicy]).toEqual([RemovalPolicy.DESTROY, RemovalPolicy.RETAIN]);
    expect(dev.externalIssuer).toBeUndefined();
    expect(staging.externalIssuer).toBeUndefined();
    expect(prod.externalIssuer?.issuer).toMatch(/^https:\/\//);
    expect([
      dev.tableDeletionProtection,
      staging.tableDeletionProtection,
      prod.tableDeletionProtection,
    ]).toEqual([false, false, true]);
    expect([dev.terminationProtection, prod.terminationProtection]).toEqual([false, true]);
    expect([staging.pointInTimeRecovery, prod.pointInTimeRecovery]).toEqual([true, true]);
    expect([staging.userPool.removalPolicy, prod.userPool.removalPolicy]).toEqual([
      RemovalPolicy.RETAIN,
      RemovalPolicy.RETAIN,
    ]);
    expect(prod.alarms.api5xxPerFiveMinutes).toBeLessThan(dev.alarms.api5xxPerFiveMinutes);
    expect(prod.alarms.apiP95LatencyMs).toBeLessThan(dev.alarms.apiP95LatencyMs);
    expect(Object.values(dev.reservedConcurrency).every((c) => c === undefined)).toBe(true);
    expect(prod.reservedConcurrency.sweeper).toBe(1);
  });

  test('dev’s throttle lets the load profiles through (up to 500 iterations/s of a few requests each)', () => {
    const { default: all, routes } = STAGE_CONFIGS.dev.apiThrottle;
    for (const throttle of [all, ...Object.values(routes)]) {
      expect(throttle.rateLimit).toBeGreaterThanOrEqual(2000);
      expect(throttle.burstLimit).toBeGreaterThanOrEqual(2000);
    }
  });

  test('prod reserves no more concurrency than an account at the default limit (1,000) can give', () => {
    const counts = { api: 4, docs: 1, projector: 1, publisher: 1, sagaStep: 1, sweeper: 2 };
    const reserved = Object.entries(counts).reduce(
      (sum, [kind, n]) => sum + n * (STAGE_CONFIGS.prod.reservedConcurrency[kind as FunctionKind] ?? 0),
      0,
    );
    // Lambda keeps 100 unreserved.
    expect(reserved).toBeLessThanOrEqual(900);
  });

  test('the account concurrency each stage needs (docs/deploy.md): its reservations plus the 100 Lambda keeps unreserved', () => {
    const reserved = (stage: string) =>
      Object.values(resourcesOf(synth(stage)))
        .filter((r) => r.Type === 'AWS::Lambda::Function')
        .reduce((sum, fn) => sum + Number(fn.Properties?.ReservedConcurrentExecutions ?? 0), 0);
    // dev reserves none (any account, even a new one at a limit of 10); staging 309, so at least 409; prod 817.
    expect(STAGES.map((stage) => reserved(stage))).toEqual([0, 309, 817]);
    expect([reserved('staging') + 100, reserved('prod') + 100]).toEqual([409, 917]);
  });

  test('the deployment settings once given with -c are refused, naming where they live now', () => {
    const ctx = (values: Record<string, string>) => (key: string) => values[key];
    expect(() => stageConfig('prod', ctx({ jwtIssuer: 'https://id.acme.test/' }), TEST_SETTINGS)).toThrow(
      'context jwtIssuer is no longer read: set prod.identity.issuer in config/stages.ts',
    );
    expect(() => stageConfig('dev', ctx({ alarmEmail: 'ops@acme.test' }))).toThrow(
      /alarmEmail is no longer read: set dev.alarmEmail in config\/stages.ts/,
    );
    expect(() => stageConfig('staging', ctx({ shopCallbackUrls: 'https://a.test/' }), TEST_SETTINGS)).toThrow(
      /staging.identity.callbackUrls in config\/stages.ts/,
    );
  });
});

describe('stage settings (config/stages.ts)', () => {
  const withStage = (
    stage: 'dev' | 'staging' | 'prod',
    change: Partial<StageSettings>,
  ): StageSettingsFile => ({
    ...TEST_SETTINGS,
    [stage]: { ...TEST_SETTINGS[stage], ...change },
  });

  test.each(['staging', 'prod'])(
    'the committed %s is placeholders, which synthesis refuses, naming each setting and the file',
    (stage) => {
      let message = '';
      try {
        synthStage(stage, {}, STAGE_SETTINGS);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain(`stage ${stage} cannot be synthesized: edit config/stages.ts`);
      for (const setting of ['account', 'region', 'alarmEmail', 'tags.owner', 'tags.costCentre'])
        expect(message).toContain(`  - ${stage}.${setting} is the placeholder "<`);
      if (stage === 'prod')
        expect(message).toContain(
          '  - prod.identity.issuer is the placeholder "https://auth.example.com/": give your identity provider’s issuer',
        );
    },
  );

  test('the committed dev needs nothing: its own user pool, in the account and region of the credentials', () => {
    const dev = stageConfig('dev');
    expect(dev.externalIssuer).toBeUndefined();
    expect(dev.env).toBeUndefined();
    expect(dev.tags).toEqual({ project: 'serverless-commerce', stage: 'dev' });
    expect(dev.userPool.callbackUrls).toEqual(
      STAGE_SETTINGS.dev.identity.kind === 'userPool' ? STAGE_SETTINGS.dev.identity.callbackUrls : [],
    );
  });

  test.each(['staging', 'prod'] as const)(
    '%s refuses a missing value and a placeholder, setting by setting',
    (stage) => {
      const refused = (change: Partial<StageSettings>, message: string | RegExp) =>
        expect(() => stageConfig(stage, undefined, withStage(stage, change))).toThrow(message);
      refused({ account: undefined }, `${stage}.account is not set: give the 12-digit AWS account id`);
      refused({ account: '1234' }, `${stage}.account is "1234", not the 12-digit AWS account id`);
      refused({ region: undefined }, `${stage}.account and ${stage}.region go together`);
      refused({ alarmEmail: undefined }, `${stage}.alarmEmail is not set`);
      refused(
        { alarmEmail: 'oncall@example.com' },
        `${stage}.alarmEmail is the placeholder "oncall@example.com"`,
      );
      refused({ tags: { owner: 'team', costCentre: '' } }, `${stage}.tags.costCentre is not set`);
      refused(
        { identity: { kind: 'external', issuer: 'https://login.example.org/pool', audience: ['api'] } },
        `${stage}.identity.issuer is the placeholder "https://login.example.org/pool"`,
      );
      refused(
        { identity: { kind: 'external', issuer: 'http://idp.acme.test/', audience: ['api'] } },
        /identity.issuer is "http:\/\/idp.acme.test\/", not your identity provider’s issuer, an https:\/\/ URL/,
      );
      refused(
        { identity: { kind: 'external', issuer: PROD_ISSUER, audience: [' '] } },
        `${stage}.identity.audience is empty`,
      );
      refused(
        { identity: { kind: 'userPool', callbackUrls: ['http://shop.acme.test/cb'], logoutUrls: [] } },
        /callbackUrls has http:\/\/shop.acme.test\/cb: https URLs only[\s\S]*logoutUrls is empty/,
      );
      // Every problem at once, so that one edit fixes them all.
      expect(() =>
        stageConfig(stage, undefined, withStage(stage, { account: undefined, alarmEmail: undefined })),
      ).toThrow(new RegExp(`${stage}.account is not set[\\s\\S]*${stage}.alarmEmail is not set`));
    },
  );

  test('dev may leave every setting unset, but not name a placeholder or half an environment', () => {
    const dev = (change: Partial<StageSettings>) => () =>
      stageConfig('dev', undefined, withStage('dev', change));
    expect(dev({ alarmEmail: undefined, account: undefined, region: undefined })).not.toThrow();
    expect(dev({ alarmEmail: 'me@example.com' })).toThrow('dev.alarmEmail is the placeholder');
    expect(dev({ account: '333333333333' })).toThrow('dev.account and dev.region go together');
    expect(dev({ identity: { kind: 'external', issuer: '', audience: ['x'] } })).toThrow(
      'dev.identity.issuer is not set',
    );
  });

  test('a secret is named, never given: the load client’s secret is a Secrets Manager name', () => {
    const loadClient = (secretsManagerName: string) =>
      withStage('staging', {
        identity: {
          kind: 'external',
          issuer: PROD_ISSUER,
          audience: ['commerce-api'],
          loadClient: {
            tokenUrl: `${PROD_ISSUER}oauth2/token`,
            clientId: 'ops',
            clientSecret: { secretsManagerName },
          },
        },
      });
    expect(
      stageConfig('staging', undefined, loadClient('commerce/staging/load-client')).externalIssuer,
    ).toEqual({
      issuer: PROD_ISSUER,
      audience: ['commerce-api'],
    });
    expect(() => stageConfig('staging', undefined, loadClient('s3cr3t value with spaces'))).toThrow(
      /secretsManagerName is "s3cr3t value with spaces", not the name \(never the value\)/,
    );
  });

  test('placeholders are the file’s fill-in marks and documentation domains (RFC 2606)', () => {
    for (const p of [
      '<prod region>',
      'https://auth.example.com/',
      'https://id.example.org/pool',
      'ops@example.net',
    ])
      expect(isPlaceholder(p)).toBe(true);
    for (const v of ['https://example.community/', PROD_ISSUER, 'eu-west-1', 'ops@acme.test'])
      expect(isPlaceholder(v)).toBe(false);
  });

  test('the values are read from the file: they reach the template', () => {
    const settings = withStage('staging', {
      alarmEmail: 'pager@acme.test',
      identity: {
        kind: 'userPool',
        callbackUrls: ['https://shop.acme.test/cb'],
        logoutUrls: ['https://shop.acme.test/'],
      },
      tags: { owner: 'shop-team', costCentre: 'cc-42' },
    });
    const { template, stack } = synthStage('staging', {}, settings);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'pager@acme.test',
    });
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      ClientName: 'shop',
      CallbackURLs: ['https://shop.acme.test/cb'],
      LogoutURLs: ['https://shop.acme.test/'],
    });
    expect([stack.account, stack.region]).toEqual(['111111111111', 'eu-west-1']);
    expect(stack.tags.tagValues()).toMatchObject({ owner: 'shop-team', 'cost-centre': 'cc-42' });
    const prod = synthStage('prod');
    prod.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      JwtConfiguration: { Issuer: PROD_ISSUER, Audience: ['commerce-api'] },
    });
  });
});

describe.each(STAGES)('the %s template follows its config', (stage) => {
  const config = synthesizedStage(stage).config;
  const template = synth(stage);
  const resources = resourcesOf(template);
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

  test('the saga has the stage’s workflow type and deadline', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: config.workflowType,
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ SAGA_DEADLINE_SECONDS: String(config.sagaDeadline.toSeconds()) }),
      },
    });
  });

  test('every log group keeps the stage’s retention and removal policy', () => {
    const groups = ofType('AWS::Logs::LogGroup');
    // One per function, the saga's executions and the API's access log.
    expect(groups.length).toBe(ofType('AWS::Lambda::Function').length + 2);
    for (const [, group] of groups) {
      expect(group.Properties?.RetentionInDays).toBe(config.logRetentionDays);
      expect(group.DeletionPolicy).toBe(config.removalPolicy === RemovalPolicy.RETAIN ? 'Retain' : 'Delete');
    }
  });

  test('every table has the stage’s removal policy and point-in-time recovery, and is encrypted', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables).toHaveLength(6);
    for (const [, table] of tables) {
      expect(table.DeletionPolicy).toBe(config.removalPolicy === RemovalPolicy.RETAIN ? 'Retain' : 'Delete');
      expect(table.Properties?.PointInTimeRecoverySpecification).toEqual({
        PointInTimeRecoveryEnabled: config.pointInTimeRecovery,
      });
      expect(table.Properties?.SSESpecification).toEqual({ SSEEnabled: true });
    }
  });

  test('the API stage is throttled: a default for every route and the stage’s settings per route', () => {
    const stages = ofType('AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(1);
    const props = stages[0]![1].Properties!;
    expect(props.StageName).toBe('$default');
    expect(props.AutoDeploy).toBe(true);
    expect(props.DefaultRouteSettings).toMatchObject({
      ThrottlingRateLimit: config.apiThrottle.default.rateLimit,
      ThrottlingBurstLimit: config.apiThrottle.default.burstLimit,
      DetailedMetricsEnabled: true,
    });
    const routeSettings = (props.RouteSettings ?? {}) as Record<string, unknown>;
    expect(Object.keys(routeSettings).sort()).toEqual(Object.keys(config.apiThrottle.routes).sort());
    const routeKeys = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties?.RouteKey);
    for (const [key, throttle] of Object.entries(config.apiThrottle.routes)) {
      expect(routeKeys).toContain(key);
      expect(routeSettings[key]).toEqual({
        ThrottlingRateLimit: throttle.rateLimit,
        ThrottlingBurstLimit: throttle.burstLimit,
        DetailedMetricsEnabled: true,
      });
    }
    // Route settings name routes by key: the stage is made after every route.
    const dependsOn = (template.toJSON().Resources[stages[0]![0]].DependsOn ?? []) as string[];
    for (const [routeId] of ofType('AWS::ApiGatewayV2::Route')) expect(dependsOn).toContain(routeId);
    expect(props.AccessLogSettings).toMatchObject({
      DestinationArn: { 'Fn::GetAtt': [expect.any(String), 'Arn'] },
    });
  });

  test('every function has the reserved concurrency of its kind', () => {
    const byDescription = (part: string) =>
      ofType('AWS::Lambda::Function').filter(([, f]) => String(f.Properties?.Description).includes(part));
    const expectReserved = (
      fns: [string, { Properties?: Record<string, unknown> }][],
      kind: FunctionKind,
    ) => {
      expect(fns.length).toBeGreaterThan(0);
      for (const [, fn] of fns) {
        expect(fn.Properties?.ReservedConcurrentExecutions).toBe(config.reservedConcurrency[kind]);
      }
    };
    expectReserved(byDescription('HTTP API'), 'api');
    expectReserved(byDescription('API documentation'), 'docs');
    expectReserved(byDescription('Projects'), 'projector');
    expectReserved(byDescription('Relays committed events'), 'publisher');
    expectReserved(byDescription('Order saga steps'), 'sagaStep');
    expectReserved(
      [...byDescription('Expires reservations'), ...byDescription('Cancels and undoes')],
      'sweeper',
    );
  });

  test('the alarms have the stage’s thresholds', () => {
    const threshold = (idPart: string) => {
      const found = ofType('AWS::CloudWatch::Alarm').filter(([id]) => id.includes(idPart));
      expect(found.length).toBeGreaterThan(0);
      return found.map(([, a]) => a.Properties?.Threshold);
    };
    expect(threshold('Api5xx')).toEqual([config.alarms.api5xxPerFiveMinutes]);
    expect(threshold('ApiLatencyP95')).toEqual([config.alarms.apiP95LatencyMs]);
    expect(new Set(threshold('IteratorAge'))).toEqual(new Set([config.alarms.streamIteratorAgeMs]));
    expect(threshold('SagaExecutionFailures')).toEqual([config.alarms.sagaExecutionFailuresPerFiveMinutes]);
    expect(threshold('SagaTimeouts')).toEqual([config.alarms.sagaTimeoutsPerFiveMinutes]);
    expect(new Set(threshold('Throttles'))).toEqual(new Set([config.alarms.lambdaThrottlesPerFiveMinutes]));
    expect(threshold('SweeperCancellations')).toEqual([config.alarms.sweeperCancellationsPerFiveMinutes]);
    expect(threshold('SweeperFailures')).toEqual([config.alarms.sweeperFailuresPerFiveMinutes]);
    expect(threshold('ReservationExpiryFailures')).toEqual([config.alarms.sweeperFailuresPerFiveMinutes]);
  });

  test('the sweepers’ cancellations and failures are alarmed, on the metrics their functions emit', () => {
    const alarmNamed = (idPart: string) => {
      const found = ofType('AWS::CloudWatch::Alarm').filter(([id]) => id.includes(idPart));
      expect(found).toHaveLength(1);
      return found[0]![1].Properties;
    };
    const onMetric = (metricName: string, service: string, threshold: number) => ({
      MetricName: metricName,
      Namespace: `Commerce/${stage}`,
      Dimensions: [{ Name: 'service', Value: service }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: threshold,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(alarmNamed('SweeperCancellations')).toMatchObject(
      onMetric('SweeperCancellations', 'saga', config.alarms.sweeperCancellationsPerFiveMinutes),
    );
    expect(alarmNamed('SweeperFailures')).toMatchObject(
      onMetric('SweeperFailures', 'saga', config.alarms.sweeperFailuresPerFiveMinutes),
    );
    expect(alarmNamed('ReservationExpiryFailures')).toMatchObject(
      onMetric('ReservationExpiryFailures', 'inventory', config.alarms.sweeperFailuresPerFiveMinutes),
    );
    // The functions emitting them run under those services, in that namespace.
    const sweepers = ofType('AWS::Lambda::Function').filter(([, f]) =>
      /Cancels and undoes|Expires reservations/.test(String(f.Properties?.Description)),
    );
    expect(
      sweepers
        .map(([, f]) => (f.Properties!.Environment as { Variables: Record<string, unknown> }).Variables)
        .map((v) => [v.POWERTOOLS_SERVICE_NAME, v.POWERTOOLS_METRICS_NAMESPACE])
        .sort(),
    ).toEqual([
      ['inventory', `Commerce/${stage}`],
      ['saga', `Commerce/${stage}`],
    ]);
  });

  test('capacity alarms warn before a throttled route or the account’s Step Functions buckets are met', () => {
    const percent = config.alarms.capacityWarningPercent;
    const alarmsNamed = (idPart: string) =>
      ofType('AWS::CloudWatch::Alarm')
        .filter(([id]) => id.includes(idPart))
        .map(([, a]) => a.Properties!);
    // Each throttled route: its requests a minute at `percent` of its rate, two minutes running.
    const routes = Object.entries(config.apiThrottle.routes);
    expect(alarmsNamed('NearThrottle')).toHaveLength(routes.length);
    for (const [routeKey, { rateLimit }] of routes) {
      const [method, resource] = routeKey.split(' ');
      const found = alarmsNamed('NearThrottle').filter((a) =>
        expect
          .arrayContaining([
            { Name: 'Method', Value: method },
            { Name: 'Resource', Value: resource },
          ])
          .asymmetricMatch(a.Dimensions),
      );
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        MetricName: 'Count',
        Statistic: 'Sum',
        Period: 60,
        Threshold: Math.ceil((rateLimit * 60 * percent) / 100),
        EvaluationPeriods: 2,
      });
    }
    // The account's buckets: consumed as a share of the refill rate, on the dimension naming the bucket.
    const onBucket = (dimension: { Name: string; Value: string }) => ({
      Threshold: percent,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Metrics: expect.arrayContaining([
        expect.objectContaining({ Expression: '100 * consumed / refill' }),
        ...['ConsumedCapacity', 'ProvisionedRefillRate'].map((metricName) =>
          expect.objectContaining({
            MetricStat: expect.objectContaining({
              Metric: { Namespace: 'AWS/States', MetricName: metricName, Dimensions: [dimension] },
            }),
          }),
        ),
      ]),
    });
    expect(alarmsNamed('SagaStartExecutionNearQuota')).toEqual([
      expect.objectContaining(onBucket({ Name: 'APIName', Value: 'StartExecution' })),
    ]);
    if (config.workflowType === 'STANDARD') {
      expect(alarmsNamed('SagaStateTransitionsNearQuota')).toEqual([
        expect.objectContaining(onBucket({ Name: 'ServiceMetric', Value: 'StateTransition' })),
      ]);
      expect(alarmsNamed('SagaExecutionsThrottled')).toEqual([
        expect.objectContaining({ Namespace: 'AWS/States', MetricName: 'ExecutionThrottled', Threshold: 1 }),
      ]);
    } else {
      // EXPRESS state transitions are not throttled.
      expect(alarmsNamed('SagaStateTransitionsNearQuota')).toEqual([]);
      expect(alarmsNamed('SagaExecutionsThrottled')).toEqual([]);
    }
  });

  test('one JWT authorizer guards every route but the documentation, each with its scopes', () => {
    const issuer = synthesizedStage(stage).config.externalIssuer;
    const authorizers = ofType('AWS::ApiGatewayV2::Authorizer');
    expect(authorizers).toHaveLength(1);
    const [authorizerId, authorizer] = authorizers[0]!;
    expect(authorizer.Properties).toMatchObject({
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
    });
    const jwt = authorizer.Properties!.JwtConfiguration as { Issuer: unknown; Audience: unknown[] };
    if (issuer) {
      expect(jwt).toEqual({ Issuer: issuer.issuer, Audience: [...issuer.audience] });
    } else {
      // The stage's own pool: its issuer URL, and both its app clients as the audience (Cognito's access
      // tokens carry `client_id`, which API Gateway's JWT authorizer checks as the audience).
      const [pool] = ofType('AWS::Cognito::UserPool');
      // A stack pinned to its region (config/stages.ts) has it written in; dev's is the deployment's.
      const region = config.env?.region;
      expect(jwt.Issuer).toEqual({
        'Fn::Join': [
          '',
          region
            ? [`https://cognito-idp.${region}.amazonaws.com/`, { Ref: pool![0] }]
            : ['https://cognito-idp.', { Ref: 'AWS::Region' }, '.amazonaws.com/', { Ref: pool![0] }],
        ],
      });
      const clients = ofType('AWS::Cognito::UserPoolClient').map(([id]) => ({ Ref: id }));
      expect(clients).toHaveLength(2);
      expect(jwt.Audience).toEqual(clients);
    }
    const routes = Object.fromEntries(
      ofType('AWS::ApiGatewayV2::Route').map(([, r]) => [r.Properties!.RouteKey as string, r.Properties!]),
    );
    expect(Object.keys(routes).sort()).toEqual(Object.keys(ROUTE_SCOPES).sort());
    for (const [key, scopes] of Object.entries(ROUTE_SCOPES)) {
      if (scopes === 'public') {
        expect({ key, type: routes[key]!.AuthorizationType }).toEqual({ key, type: 'NONE' });
        expect(routes[key]!.AuthorizerId).toBeUndefined();
        continue;
      }
      expect({ key, ...routes[key] }).toMatchObject({
        key,
        AuthorizationType: 'JWT',
        AuthorizerId: { Ref: authorizerId },
        AuthorizationScopes: scopes,
      });
    }
  });

  test('the event stores are append-only for every function: no UpdateItem, DeleteItem or BatchWriteItem on them', () => {
    const eventTables = ofType('AWS::DynamoDB::Table')
      .filter(([, t]) => JSON.stringify(t.Properties?.KeySchema).includes('aggregateId'))
      .map(([id]) => id);
    expect(eventTables).toHaveLength(4);
    let appenders = 0;
    for (const [, policy] of ofType('AWS::IAM::Policy')) {
      const statements = (policy.Properties!.PolicyDocument as { Statement: Statement[] }).Statement;
      for (const statement of statements) {
        const onEventTable = [...referencedIds(statement.Resource)].some((id) => eventTables.includes(id));
        if (!onEventTable) continue;
        const actions = [statement.Action].flat();
        expect(actions).not.toContain('dynamodb:UpdateItem');
        expect(actions).not.toContain('dynamodb:DeleteItem');
        expect(actions).not.toContain('dynamodb:BatchWriteItem');
        expect(actions.some((a) => a === 'dynamodb:*' || a === 'dynamodb:Update*')).toBe(false);
        if (actions.includes('dynamodb:PutItem')) appenders++;
      }
    }
    // The accounts, inventory and orders APIs, the expirer, the saga's steps and its sweeper (4 tables each).
    expect(appenders).toBeGreaterThanOrEqual(5);
  });

  test(`the stage’s tables ${config.tableDeletionProtection ? 'are' : 'are not'} protected from deletion, and its stack ${config.terminationProtection ? 'is' : 'is not'} from termination`, () => {
    for (const [, table] of ofType('AWS::DynamoDB::Table')) {
      expect(table.Properties?.DeletionProtectionEnabled ?? false).toBe(config.tableDeletionProtection);
    }
    expect(synthesizedStage(stage).stack.terminationProtection).toBe(config.terminationProtection);
  });
});

/** Each route of the contract and the scopes its token needs any one of (api.md, "Identity and access"). */
const SHOP_OR_ADMIN = ['commerce/shop', 'commerce/admin'];
const ADMIN = ['commerce/admin'];
const ROUTE_SCOPES: Record<string, string[] | 'public'> = {
  'POST /customers': SHOP_OR_ADMIN,
  'GET /customers/{customerId}': SHOP_OR_ADMIN,
  'GET /customers/me': SHOP_OR_ADMIN,
  'POST /products': ADMIN,
  'GET /products/{productId}': SHOP_OR_ADMIN,
  'POST /products/{productId}/reservations': SHOP_OR_ADMIN,
  'DELETE /products/{productId}/reservations/{reservationId}': SHOP_OR_ADMIN,
  'POST /products/{productId}/restock': ADMIN,
  'POST /orders': SHOP_OR_ADMIN,
  'GET /orders/{orderId}': SHOP_OR_ADMIN,
  'GET /orders/{orderId}/saga': SHOP_OR_ADMIN,
  'GET /payments/{paymentId}': SHOP_OR_ADMIN,
  'GET /openapi.json': 'public',
  'GET /docs': 'public',
};

interface Statement {
  Action: string | string[];
  Resource: unknown;
}

describe('identity', () => {
  const resources = (stage: string) => resourcesOf(synth(stage));
  const ofType = (stage: string, type: string) =>
    Object.entries(resources(stage)).filter(([, r]) => r.Type === type);

  test.each(['dev', 'staging'])(
    '%s has its own user pool: scopes commerce/shop and commerce/admin, a shoppers’ and an operators’ client',
    (stage) => {
      expect(ofType(stage, 'AWS::Cognito::UserPool')).toHaveLength(1);
      const [[serverId, server]] = ofType(stage, 'AWS::Cognito::UserPoolResourceServer') as [
        [string, Resources[string]],
      ];
      expect(server.Properties).toMatchObject({
        Identifier: 'commerce',
        Scopes: [
          { ScopeName: 'shop', ScopeDescription: expect.any(String) },
          { ScopeName: 'admin', ScopeDescription: expect.any(String) },
        ],
      });
      // A client's scope names the resource server by reference (`{Ref}` is its identifier): resolved here.
      const scopeName = (scope: unknown) =>
        typeof scope === 'string'
          ? scope
          : (scope as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1]
              .map((part) =>
                JSON.stringify(part) === JSON.stringify({ Ref: serverId })
                  ? server.Properties!.Identifier
                  : part,
              )
              .join('');
      const clients = Object.fromEntries(
        ofType(stage, 'AWS::Cognito::UserPoolClient').map(([, c]) => [
          c.Properties!.ClientName,
          { ...c.Properties!, scopes: (c.Properties!.AllowedOAuthScopes as unknown[]).map(scopeName) },
        ]),
      );
      expect(clients.shop).toMatchObject({
        GenerateSecret: false,
        AllowedOAuthFlows: ['code'],
        AllowedOAuthFlowsUserPoolClient: true,
        scopes: expect.arrayContaining(['commerce/shop', 'openid']),
      });
      expect(clients.shop!.scopes).not.toContain('commerce/admin');
      expect(clients.operator).toMatchObject({
        GenerateSecret: true,
        AllowedOAuthFlows: ['client_credentials'],
        AllowedOAuthFlowsUserPoolClient: true,
        scopes: ['commerce/admin'],
      });
      expect(ofType(stage, 'AWS::Cognito::UserPoolDomain')).toHaveLength(1);
    },
  );

  test('the pool and its clients are kept (RETAIN) on staging, not on dev', () => {
    const policies = (stage: string) =>
      Object.values(resources(stage))
        .filter((r) => r.Type.startsWith('AWS::Cognito::'))
        .map((r) => r.DeletionPolicy);
    expect(new Set(policies('staging'))).toEqual(new Set(['Retain']));
    expect(new Set(policies('dev'))).toEqual(new Set(['Delete']));
    expect(ofType('staging', 'AWS::Cognito::UserPool')[0]![1].Properties?.DeletionProtection).toBe('ACTIVE');
  });

  test('prod trusts its external issuer (no pool of its own), and refuses the placeholder', () => {
    expect(ofType('prod', 'AWS::Cognito::UserPool')).toHaveLength(0);
    const placeholder: StageSettingsFile = {
      ...TEST_SETTINGS,
      prod: {
        ...TEST_SETTINGS.prod,
        identity: { kind: 'external', issuer: 'https://auth.example.com/', audience: ['commerce-api'] },
      },
    };
    expect(() => synthStage('prod', {}, placeholder)).toThrow(
      /stage prod cannot be synthesized: edit config\/stages.ts[\s\S]*prod.identity.issuer is the placeholder "https:\/\/auth.example.com\/"/,
    );
  });

  test('a stage without an issuer of its own config may be given one, issuer and audience together', () => {
    const settings: StageSettingsFile = {
      ...TEST_SETTINGS,
      dev: {
        ...TEST_SETTINGS.dev,
        identity: { kind: 'external', issuer: 'https://id.acme.test/', audience: ['x'] },
      },
    };
    expect(stageConfig('dev', undefined, settings).externalIssuer).toEqual({
      issuer: 'https://id.acme.test/',
      audience: ['x'],
    });
    const { template } = synthStage('dev', {}, settings);
    expect(Object.keys(template.findResources('AWS::Cognito::UserPool'))).toHaveLength(0);
  });

  test('the per-caller hold limit reaches the functions that reserve stock', () => {
    const template = synth('dev');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Inventory HTTP API: products, reservations, restock',
      Environment: {
        Variables: Match.objectLike({ HOLD_LIMIT_PER_CALLER: String(STAGE_CONFIGS.dev.holdLimitPerCaller) }),
      },
    });
    expect(stageConfig('dev', (k) => (k === 'holdLimitPerCaller' ? '3' : undefined)).holdLimitPerCaller).toBe(
      3,
    );
    expect(() => stageConfig('dev', (k) => (k === 'holdLimitPerCaller' ? '0' : undefined))).toThrow(/whole/);
  });
});

test('staging and prod keep point-in-time recovery; prod protects its tables and its stack; dev does none', () => {
  const pitr = (stage: string) =>
    Object.values(resourcesOf(synth(stage)))
      .filter((x) => x.Type === 'AWS::DynamoDB::Table')
      .map(
        (t) =>
          (t.Properties!.PointInTimeRecoverySpecification as { PointInTimeRecoveryEnabled: boolean })
            .PointInTimeRecoveryEnabled,
      );
  expect(new Set(pitr('prod'))).toEqual(new Set([true]));
  expect(new Set(pitr('staging'))).toEqual(new Set([true]));
  expect(new Set(pitr('dev'))).toEqual(new Set([false]));
  const deletionProtection = (stage: string) =>
    Object.values(resourcesOf(synth(stage)))
      .filter((x) => x.Type === 'AWS::DynamoDB::Table')
      .map((t) => t.Properties!.DeletionProtectionEnabled ?? false);
  expect(new Set(deletionProtection('prod'))).toEqual(new Set([true]));
  expect(new Set(deletionProtection('dev'))).toEqual(new Set([false]));
  expect(synthesizedStage('prod').stack.terminationProtection).toBe(true);
  expect(synthesizedStage('dev').stack.terminationProtection).toBe(false);
});

test('prod is tagged for its owner and bill, on the stack and every taggable resource, and its stack is protected', () => {
  const { stack, template } = synthesizedStage('prod');
  const expected = {
    project: 'serverless-commerce',
    stage: 'prod',
    owner: TEST_SETTINGS.prod.tags.owner,
    'cost-centre': TEST_SETTINGS.prod.tags.costCentre,
  };
  expect(stack.tags.tagValues()).toEqual(expected);
  expect(stack.terminationProtection).toBe(true);
  expect([stack.account, stack.region]).toEqual([TEST_SETTINGS.prod.account, TEST_SETTINGS.prod.region]);
  const tagsOf = (tags: unknown): Record<string, string> =>
    Array.isArray(tags)
      ? Object.fromEntries((tags as { Key: string; Value: string }[]).map((t) => [t.Key, t.Value]))
      : ((tags ?? {}) as Record<string, string>);
  const taggable = [
    'AWS::Lambda::Function',
    'AWS::DynamoDB::Table',
    'AWS::SQS::Queue',
    'AWS::StepFunctions::StateMachine',
    'AWS::SNS::Topic',
    'AWS::KMS::Key',
    'AWS::Logs::LogGroup',
    'AWS::ApiGatewayV2::Api',
    'AWS::IAM::Role',
  ];
  let checked = 0;
  for (const [id, resource] of Object.entries(resourcesOf(template))) {
    if (!taggable.includes(resource.Type)) continue;
    checked++;
    expect({ id, tags: tagsOf(resource.Properties?.Tags) }).toEqual({
      id,
      tags: expect.objectContaining(expected),
    });
  }
  expect(checked).toBeGreaterThan(30);
  // dev, with nothing set, still says what it is.
  expect(synthesizedStage('dev').stack.tags.tagValues()).toEqual({
    project: 'serverless-commerce',
    stage: 'dev',
  });
});

describe.each(STAGES)('failure wiring of the %s stage', (stage) => {
  const template = synth(stage);
  const resources = resourcesOf(template);
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const queueIds = new Set(ofType('AWS::SQS::Queue').map(([id]) => id));

  test('every EventBridge rule target retries a bounded number of times and has a dead-letter queue', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules).toHaveLength(3);
    for (const [, rule] of rules) {
      for (const target of rule.Properties!.Targets as Record<string, Record<string, unknown>>[]) {
        expect(target.RetryPolicy).toMatchObject({ MaximumRetryAttempts: expect.any(Number) });
        expect(target.RetryPolicy!.MaximumEventAgeInSeconds).toBeGreaterThan(0);
        const dlq = referencedIds(target.DeadLetterConfig);
        expect(dlq.size).toBe(1);
        expect(queueIds.has([...dlq][0]!)).toBe(true);
      }
    }
  });

  test('every function a rule invokes asynchronously has an on-failure destination', () => {
    const asyncTargets = ofType('AWS::Events::Rule').flatMap(([, rule]) =>
      (rule.Properties!.Targets as { Arn: unknown }[]).flatMap((t) => [...referencedIds(t.Arn)]),
    );
    const functions = asyncTargets.filter((id) => resources[id]?.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(2);
    const configs = ofType('AWS::Lambda::EventInvokeConfig');
    for (const fn of functions) {
      const invokeConfig = configs.find(([, c]) => referencedIds(c.Properties?.FunctionName).has(fn));
      expect(invokeConfig).toBeDefined();
      expect(invokeConfig![1].Properties).toMatchObject({ MaximumRetryAttempts: 2 });
      const destination = referencedIds(
        (invokeConfig![1].Properties?.DestinationConfig as Record<string, unknown>)?.OnFailure,
      );
      expect([...destination].every((id) => queueIds.has(id))).toBe(true);
      expect(destination.size).toBe(1);
    }
  });

  test('the saga logs every execution event and its steps retry and catch', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      LoggingConfiguration: {
        Level: 'ALL',
        Destinations: [
          { CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [Match.anyValue(), 'Arn'] } } },
        ],
      },
      TracingConfiguration: { Enabled: true },
    });
    const asl = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'statemachines', 'order-saga.asl.json'), 'utf8'),
    ) as { States: Record<string, { Type: string; Retry?: unknown[]; Catch?: unknown[] }> };
    for (const [name, state] of Object.entries(asl.States)) {
      if (state.Type !== 'Task') continue;
      expect({ name, retries: (state.Retry ?? []).length > 0 }).toEqual({ name, retries: true });
    }
    for (const name of ['ReserveStock', 'CapturePayment', 'ConfirmOrder']) {
      expect(asl.States[name]!.Catch?.length).toBeGreaterThan(0);
    }
  });

  test('every queue is where something fails to, and an alarm watches its depth', () => {
    const failingInto = new Set<string>();
    for (const [, m] of ofType('AWS::Lambda::EventSourceMapping')) {
      for (const id of referencedIds(m.Properties?.DestinationConfig)) failingInto.add(id);
    }
    for (const [, c] of ofType('AWS::Lambda::EventInvokeConfig')) {
      for (const id of referencedIds(c.Properties?.DestinationConfig)) failingInto.add(id);
    }
    for (const [, rule] of ofType('AWS::Events::Rule')) {
      for (const t of rule.Properties!.Targets as { DeadLetterConfig?: unknown }[]) {
        for (const id of referencedIds(t.DeadLetterConfig)) failingInto.add(id);
      }
    }
    expect([...queueIds].sort()).toEqual([...failingInto].sort());
    const watched = ofType('AWS::CloudWatch::Alarm')
      .filter(([, a]) => a.Properties?.MetricName === 'ApproximateNumberOfMessagesVisible')
      .flatMap(([, a]) => [...referencedIds(a.Properties?.Dimensions)]);
    expect([...new Set(watched)].sort()).toEqual([...queueIds].sort());
    for (const id of queueIds) {
      expect(resources[id]!.Properties).toMatchObject({
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: 1209600,
      });
    }
  });
});

describe.each(STAGES)('observability of the %s stage', (stage) => {
  const template = synth(stage);
  const resources = resourcesOf(template);
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

  test('one dashboard shows requests and p95 per route, 4xx/5xx, saga outcomes and duration, iterator age, dead letters and throttles', () => {
    const dashboards = ofType('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    expect(dashboards[0]![1].Properties?.DashboardName).toBe(`commerce-${stage}`);
    const body = JSON.stringify(dashboards[0]![1].Properties?.DashboardBody);
    for (const [, route] of ofType('AWS::ApiGatewayV2::Route')) {
      const [method, path] = String(route.Properties?.RouteKey).split(' ');
      expect(body).toContain(`\\"Method\\",\\"${method}\\",\\"Resource\\",\\"${path}\\"`);
    }
    for (const needle of [
      '\\"Count\\"',
      '\\"stat\\":\\"p95\\"',
      '4xx',
      '5xx',
      'SagaConfirmed',
      'SagaCancelledByReason',
      'SagaDurationMs',
      'ExecutionsFailed',
      'IteratorAge',
      'ApproximateNumberOfMessagesVisible',
      'Throttles',
    ]) {
      expect(body).toContain(needle);
    }
    expect(body).toContain(`Commerce/${stage}`);
  });

  test('every alarm notifies the alarm topic, which is encrypted with a rotated key and refuses plain HTTP', () => {
    const [topicId, topic] = ofType('AWS::SNS::Topic')[0]!;
    expect(ofType('AWS::SNS::Topic')).toHaveLength(1);
    const [keyId] = [...referencedIds(topic.Properties?.KmsMasterKeyId)];
    expect(resources[keyId!]).toMatchObject({
      Type: 'AWS::KMS::Key',
      Properties: { EnableKeyRotation: true },
    });
    const alarms = ofType('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThanOrEqual(20);
    for (const [, alarm] of alarms) {
      expect(alarm.Properties?.AlarmActions).toEqual([{ Ref: topicId }]);
    }
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  test('every function publishes its metrics under the stage’s namespace', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      expect(fn.Properties?.Environment).toMatchObject({
        Variables: expect.objectContaining({ POWERTOOLS_METRICS_NAMESPACE: `Commerce/${stage}` }),
      });
    }
  });
});

/** Actions that AWS authorizes on no particular resource, so `Resource: "*"` is the only way to grant them. */
const RESOURCELESS_ACTIONS = new Set([
  'xray:PutTraceSegments',
  'xray:PutTelemetryRecords',
  'xray:GetSamplingRules',
  'xray:GetSamplingTargets',
  'dynamodb:ListStreams',
  'logs:CreateLogDelivery',
  'logs:GetLogDelivery',
  'logs:UpdateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:DescribeResourcePolicies',
  'logs:DescribeLogGroups',
]);

describe.each(STAGES)('least privilege on the %s stage', (stage) => {
  const template = synth(stage);
  const resources = resourcesOf(template);
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  interface Statement {
    policy: string;
    roles: string[];
    actions: string[];
    resources: unknown[];
  }
  const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const statements: Statement[] = ofType('AWS::IAM::Policy').flatMap(([policy, p]) =>
    asArray(
      (p.Properties!.PolicyDocument as { Statement: unknown }).Statement as Record<string, unknown>[],
    ).map((s) => ({
      policy,
      roles: asArray(p.Properties?.Roles as unknown[]).flatMap((r) => [...referencedIds(r)]),
      actions: asArray(s.Action as string | string[]),
      resources: asArray(s.Resource),
    })),
  );

  test('no role has a managed policy or an inline policy outside the template’s policies', () => {
    for (const [, role] of ofType('AWS::IAM::Role')) {
      expect(role.Properties?.ManagedPolicyArns ?? []).toEqual([]);
      expect(role.Properties?.Policies ?? []).toEqual([]);
    }
    expect(statements.length).toBeGreaterThan(0);
  });

  test('no statement grants a wildcard action, and "*" resources only for actions that have no resource', () => {
    for (const s of statements) {
      for (const action of s.actions)
        expect({ policy: s.policy, action }).toEqual({
          policy: s.policy,
          action: expect.not.stringContaining('*'),
        });
      if (s.resources.includes('*')) {
        for (const action of s.actions)
          expect({ policy: s.policy, action, resourceless: RESOURCELESS_ACTIONS.has(action) }).toMatchObject({
            resourceless: true,
          });
      }
    }
  });

  test('every function’s role reaches only the resources the function is wired to', () => {
    const routes = ofType('AWS::ApiGatewayV2::Route');
    const integrations = Object.fromEntries(ofType('AWS::ApiGatewayV2::Integration'));
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBe(10);
    for (const [fnId, fn] of functions) {
      const [roleId] = [...referencedIds(fn.Properties?.Role)];
      const wired = new Set<string>([
        ...referencedIds(fn.Properties?.Environment),
        ...referencedIds(fn.Properties?.LoggingConfig),
        ...referencedIds(fn.Properties?.DeadLetterConfig),
      ]);
      for (const [, m] of ofType('AWS::Lambda::EventSourceMapping')) {
        if (referencedIds(m.Properties?.FunctionName).has(fnId)) {
          for (const id of referencedIds([m.Properties?.EventSourceArn, m.Properties?.DestinationConfig]))
            wired.add(id);
        }
      }
      for (const [, c] of ofType('AWS::Lambda::EventInvokeConfig')) {
        if (referencedIds(c.Properties?.FunctionName).has(fnId)) {
          for (const id of referencedIds(c.Properties?.DestinationConfig)) wired.add(id);
        }
      }
      // The function behind `GET /orders/{orderId}/saga` reads the saga's executions (its trace).
      const servesSagaTrace = routes.some(
        ([, r]) =>
          r.Properties?.RouteKey === 'GET /orders/{orderId}/saga' &&
          [...referencedIds(r.Properties?.Target)].some((i) =>
            referencedIds(integrations[i]?.Properties?.IntegrationUri).has(fnId),
          ),
      );
      const reached = new Set(
        statements.filter((s) => s.roles.includes(roleId!)).flatMap((s) => [...referencedIds(s.resources)]),
      );
      for (const id of reached) {
        const allowed =
          wired.has(id) || (servesSagaTrace && resources[id]?.Type === 'AWS::StepFunctions::StateMachine');
        expect({ function: fnId, reaches: id, wired: allowed }).toEqual({
          function: fnId,
          reaches: id,
          wired: true,
        });
      }
    }
  });

  test('the saga machine may invoke only its step function and read only the orders table, and its rule may only start it', () => {
    const [machineId, machine] = ofType('AWS::StepFunctions::StateMachine')[0]!;
    const [roleId] = [...referencedIds(machine.Properties?.RoleArn)];
    const substitutions = machine.Properties?.DefinitionSubstitutions as Record<string, unknown>;
    const granted = (action: string) =>
      statements
        .filter((s) => s.roles.includes(roleId!) && s.actions.includes(action))
        .flatMap((s) => [...referencedIds(s.resources)]);
    expect(new Set(granted('lambda:InvokeFunction'))).toEqual(referencedIds(substitutions.SagaStepsFunction));
    // ClaimedAlready's GetItem: the orders table itself, none of its indexes.
    expect(new Set(granted('dynamodb:GetItem'))).toEqual(referencedIds(substitutions.OrdersTable));
    const machineActions = statements.filter((s) => s.roles.includes(roleId!)).flatMap((s) => s.actions);
    expect(machineActions.filter((a) => a.startsWith('dynamodb:'))).toEqual(['dynamodb:GetItem']);
    const starters = statements.filter((s) => s.actions.includes('states:StartExecution'));
    expect(starters.length).toBeGreaterThan(0);
    for (const s of starters) expect(s.resources).toEqual([{ Ref: machineId }]);
  });

  test('no secret is written into the template', () => {
    const text = JSON.stringify(template.toJSON());
    expect(text).not.toMatch(/AKIA[0-9A-Z]{16}/);
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const names = Object.keys((fn.Properties!.Environment as { Variables: object }).Variables);
      for (const name of names) expect(name).not.toMatch(/SECRET|PASSWORD|TOKEN|PRIVATE|API_KEY/i);
    }
  });
});

describe('cdk-nag (AWS Solutions)', () => {
  test.each(STAGES)(
    'the %s stage has no unacknowledged finding, and every acknowledgement gives a reason',
    (stage) => {
      // synthStage throws on a finding not acknowledged; the report lists what was acknowledged, and why.
      const { outdir } = synthesizedStage(stage);
      const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
        pluginReports: { pluginName: string; violations: unknown[]; suppressedViolations?: unknown[] }[];
      };
      const pack = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions');
      expect(pack).toBeDefined();
      expect(pack!.violations).toEqual([]);
      const metadata = JSON.stringify(JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')));
      expect(metadata).not.toContain('"reason":""');
    },
  );

  test('a finding nobody acknowledged fails synthesis (the check is live)', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'nag-'));
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir, ...UNVALIDATED });
    const stack = new Stack(app, 'Unacknowledged');
    new sns.Topic(stack, 'PlainTopic');
    addNagChecks(app);
    try {
      expect(() => app.synth()).toThrow(/AwsSolutions-SNS3/);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
