import { join } from 'node:path';
import {
  Duration,
  aws_events as events,
  aws_iam as iam,
  aws_logs as logs,
  aws_stepfunctions as sfn,
  aws_events_targets as targets,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { acknowledgeCheckov, LOG_GROUP_KEY_REASON } from '../checkov';
import { grantItemReadWrites } from '../constructs/event-store-table';
import { ServiceFunction } from '../constructs/service-function';
import { DeadLetterQueue, scheduledTarget } from '../constructs/stream-consumer';
import { acknowledgeNag, logicalIdOf } from '../nag';
import type { StageConfig } from '../stage-config';
import type { AccountsService } from './accounts';
import type { InventoryService } from './inventory';
import type { OrdersService } from './orders';
import type { PaymentsService } from './payments';

export interface OrderSagaProps {
  readonly config: StageConfig;
  readonly bus: events.IEventBus;
  readonly accounts: AccountsService;
  readonly inventory: InventoryService;
  readonly orders: OrdersService;
  readonly payments: PaymentsService;
}

/**
 * The order saga: `OrderPlaced` on the bus starts the state machine of
 * `statemachines/order-saga.asl.json` (reserve stock → capture payment →
 * confirm, with compensation), whose steps are one Lambda per service; and a
 * scheduled sweeper that finishes orders whose saga was lost.
 */
export class OrderSaga extends Construct {
  readonly stateMachine: sfn.StateMachine;
  /** `OrderPlaced` events EventBridge could not start an execution for. */
  readonly deadLetters: DeadLetterQueue;
  /** Sweeps that failed to be delivered or failed every attempt (the next sweep retries their work). */
  readonly sweepFailures: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: OrderSagaProps) {
    super(scope, id);
    const { config, accounts, inventory, orders, payments } = props;
    const step = (name: string, entry: string, service: string, environment: Record<string, string>) =>
      new ServiceFunction(this, name, {
        entry,
        service,
        kind: 'sagaStep',
        config,
        description: `Order saga steps of ${service}`,
        environment,
        timeout: Duration.seconds(10),
      }).fn;

    const inventorySteps = step('InventorySteps', 'inventory/handlers/saga.ts', 'inventory', {
      ...inventory.commandEnvironment,
      ORDERS_TABLE: orders.events.tableName,
    });
    inventory.events.grantReadWriteData(inventorySteps);
    // Its first step claims the order for the execution before reserving.
    grantItemReadWrites(orders.events, inventorySteps);

    const paymentsSteps = step('PaymentsSteps', 'payments/handlers/saga.ts', 'payments', {
      PAYMENTS_TABLE: payments.events.tableName,
      ACCOUNTS_TABLE: accounts.events.tableName,
    });
    payments.events.grantReadWriteData(paymentsSteps);
    accounts.events.grantReadWriteData(paymentsSteps);

    const ordersEnvironment = {
      ORDERS_TABLE: orders.events.tableName,
      PAYMENTS_TABLE: payments.events.tableName,
      ACCOUNTS_TABLE: accounts.events.tableName,
      ...inventory.commandEnvironment,
    };
    const ordersSteps = step('OrdersSteps', 'orders/handlers/saga.ts', 'orders', ordersEnvironment);
    grantItemReadWrites(orders.events, ordersSteps);
    // Confirming an order sells its stock in the same transaction; cancelling gives the stock back and
    // refunds (or voids) the payment, with the customer's credit, in the same transaction.
    inventory.events.grantReadWriteData(ordersSteps);
    payments.events.grantReadWriteData(ordersSteps);
    accounts.events.grantReadWriteData(ordersSteps);

    const executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.removalPolicy,
    });
    acknowledgeCheckov(executionLogs, 'CKV_AWS_158', LOG_GROUP_KEY_REASON);
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromFile(
        join(__dirname, '..', '..', 'statemachines', 'order-saga.asl.json'),
      ),
      definitionSubstitutions: {
        InventoryStepsFunction: inventorySteps.functionArn,
        PaymentsStepsFunction: paymentsSteps.functionArn,
        OrdersStepsFunction: ordersSteps.functionArn,
      },
      stateMachineType: sfn.StateMachineType[config.workflowType],
      tracingEnabled: true,
      logs: {
        destination: executionLogs,
        // Every state's entry and exit: on EXPRESS this log is the only history of an execution.
        level: sfn.LogLevel.ALL,
        // Inputs and outputs carry customers' orders; the steps' own logs have what a failure needs.
        includeExecutionData: false,
      },
    });
    acknowledgeNag(
      this.stateMachine,
      'IAM5[Resource::*]',
      'log delivery (logs:*LogDelivery, DescribeLogGroups...) and X-Ray actions support no resource-level permissions',
    );
    for (const fn of [inventorySteps, paymentsSteps, ordersSteps]) {
      acknowledgeNag(
        this.stateMachine,
        `IAM5[Resource::<${logicalIdOf(fn)}.Arn>:*]`,
        'invoking the versions and aliases of this one step function',
      );
    }
    for (const fn of [inventorySteps, paymentsSteps, ordersSteps]) fn.grantInvoke(this.stateMachine);

    this.deadLetters = new DeadLetterQueue(this, 'StartFailures');
    new events.Rule(this, 'StartOnOrderPlaced', {
      description: 'Starts the order saga for every placed order',
      eventBus: props.bus,
      eventPattern: { source: ['commerce.orders'], detailType: ['OrderPlaced'] },
      targets: [
        new targets.SfnStateMachine(this.stateMachine, {
          retryAttempts: 20,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: this.deadLetters.queue,
        }),
      ],
    });
    this.sweepFailures = new DeadLetterQueue(this, 'SweepFailures');

    const sweeper = new ServiceFunction(this, 'Sweeper', {
      entry: 'orders/handlers/sweeper.ts',
      service: 'orders',
      kind: 'sweeper',
      config,
      description: 'Cancels and undoes orders whose saga outlived its deadline',
      environment: {
        ...ordersEnvironment,
        SWEEPER_GRACE_SECONDS: String(config.sweeperGrace.toSeconds()),
      },
      timeout: Duration.minutes(1),
      onFailure: this.sweepFailures.queue,
    }).fn;
    grantItemReadWrites(orders.events, sweeper);
    orders.grantPlacedIndexQuery(sweeper);
    inventory.events.grantReadWriteData(sweeper);
    payments.events.grantReadWriteData(sweeper);
    accounts.events.grantReadWriteData(sweeper);
    new events.Rule(this, 'SweepLostSagas', {
      description: 'Runs the sweeper of orders past their saga deadline',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      targets: [new targets.LambdaFunction(sweeper, scheduledTarget(this.sweepFailures.queue))],
    });

    // The fast path: the placing request starts the saga itself once its append has committed (the
    // rule above stays the guarantee; ReserveStock's claim keeps one effective execution per order).
    orders.api.addEnvironment('ORDER_SAGA_ARN', this.stateMachine.stateMachineArn);
    this.stateMachine.grantStartExecution(orders.api);

    // The trace of `GET /orders/{id}/saga` reads this machine's executions.
    const executionKind = config.workflowType === 'EXPRESS' ? 'express' : 'execution';
    acknowledgeNag(
      orders.api.role!,
      `IAM5[Resource::arn:aws:states:<AWS::Region>:<AWS::AccountId>:${executionKind}:<${logicalIdOf(this.stateMachine)}.Name>:*]`,
      'the executions of this one state machine, whose names are made at run time',
    );
    orders.api.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['states:DescribeExecution', 'states:GetExecutionHistory'],
        resources: [
          `arn:aws:states:${this.stateMachine.env.region}:${this.stateMachine.env.account}:${executionKind}:${this.stateMachine.stateMachineName}:*`,
        ],
      }),
    );
  }
}
