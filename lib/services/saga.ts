import { join } from 'node:path';
import {
  Duration,
  aws_events as events,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_stepfunctions as sfn,
  Token,
  aws_events_targets as targets,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { accountsEnvironment } from '../../functions/accounts/seams';
import { orderSagaEnvironment, ordersEnvironment } from '../../functions/orders/seams';
import { paymentsEnvironment } from '../../functions/payments/seams';
import { SAGA_SERVICE, sweeperEnvironment } from '../../functions/saga/seams';
import { acknowledgeCheckov, LOG_GROUP_KEY_REASON } from '../checkov';
import { grantAppends } from '../constructs/event-store-table';
import { ServiceFunction } from '../constructs/service-function';
import { DeadLetterQueue, scheduledTarget } from '../constructs/stream-consumer';
import { acknowledgeNag, logicalIdOf } from '../nag';
import type { Watchlist } from '../observability/watchlist';
import type { StageConfig } from '../stage-config';
import type { AccountsService } from './accounts';
import type { InventoryService } from './inventory';
import type { OrdersService } from './orders';
import type { PaymentsService } from './payments';

export interface OrderSagaProps {
  readonly config: StageConfig;
  readonly watchlist: Watchlist;
  readonly bus: events.IEventBus;
  readonly accounts: AccountsService;
  readonly inventory: InventoryService;
  readonly orders: OrdersService;
  readonly payments: PaymentsService;
}

/**
 * The order saga: `OrderPlaced` on the bus starts the state machine of
 * `statemachines/order-saga.asl.json` (reserve stock → capture payment →
 * confirm, with compensation), whose steps are one Lambda (functions/saga); and a
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
    const { config, watchlist } = props;
    const steps = this.addSteps(props);
    this.stateMachine = this.addStateMachine(props, steps);
    this.deadLetters = new DeadLetterQueue(this, 'StartFailures', config.removalPolicy, watchlist);
    this.startOnOrderPlaced(props.bus);
    this.sweepFailures = new DeadLetterQueue(this, 'SweepFailures', config.removalPolicy, watchlist);
    this.addSweeper(props);
    this.letOrdersStartAndTrace(props);
  }

  /** The one function of all the steps. */
  private addSteps(props: OrderSagaProps) {
    const { config, watchlist } = props;
    // One function for all the steps: an order's steps can share one warm environment (decisions/0006).
    const steps = new ServiceFunction(this, 'Steps', {
      entry: 'saga/handlers/steps.ts',
      service: SAGA_SERVICE,
      kind: 'sagaStep',
      config,
      watchlist,
      description: 'Order saga steps: reserve stock, capture payment, confirm, cancel',
      environment: sagaEnvironment(props),
      timeout: Duration.seconds(10),
    }).fn;
    grantSagaWrites(props, steps);
    return steps;
  }

  /** The state machine of `statemachines/order-saga.asl.json`, whose every step invokes `steps`. */
  private addStateMachine({ config, orders }: OrderSagaProps, steps: lambda.IFunction) {
    const executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.removalPolicy,
    });
    acknowledgeCheckov(executionLogs, 'CKV_AWS_158', LOG_GROUP_KEY_REASON);
    const stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromFile(
        join(__dirname, '..', '..', 'statemachines', 'order-saga.asl.json'),
      ),
      definitionSubstitutions: { SagaStepsFunction: steps.functionArn, OrdersTable: orders.events.tableName },
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
      stateMachine,
      'IAM5[Resource::*]',
      'log delivery (logs:*LogDelivery, DescribeLogGroups...) and X-Ray actions support no resource-level permissions',
    );
    acknowledgeNag(
      stateMachine,
      `IAM5[Resource::<${logicalIdOf(steps)}.Arn>:*]`,
      'invoking the versions and aliases of this one step function',
    );
    steps.grantInvoke(stateMachine);
    // ClaimedAlready: an execution not started by the request reads whether the order was claimed.
    stateMachine.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [orders.events.tableArn] }),
    );
    return stateMachine;
  }

  /** The rule that starts an execution for every `OrderPlaced` on the bus (the guarantee). */
  private startOnOrderPlaced(bus: events.IEventBus) {
    new events.Rule(this, 'StartOnOrderPlaced', {
      description: 'Starts the order saga for every placed order',
      eventBus: bus,
      eventPattern: { source: ['commerce.orders'], detailType: ['OrderPlaced'] },
      targets: [
        new targets.SfnStateMachine(this.stateMachine, {
          retryAttempts: 20,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: this.deadLetters.queue,
        }),
      ],
    });
  }

  /** The sweeper, run every minute, of orders past their saga deadline. */
  private addSweeper(props: OrderSagaProps) {
    const { config, watchlist, orders } = props;
    const sweeper = new ServiceFunction(this, 'Sweeper', {
      entry: 'saga/handlers/sweeper.ts',
      service: SAGA_SERVICE,
      kind: 'sweeper',
      config,
      watchlist,
      description: 'Cancels and undoes orders whose saga outlived its deadline',
      environment: {
        ...sagaEnvironment(props),
        ...sweeperEnvironment.write({ sweeperGraceSeconds: config.sweeperGrace.toSeconds() }),
      },
      timeout: Duration.minutes(1),
      onFailure: this.sweepFailures.queue,
    }).fn;
    grantSagaWrites(props, sweeper);
    orders.grantPlacedIndexQuery(sweeper);
    new events.Rule(this, 'SweepLostSagas', {
      description: 'Runs the sweeper of orders past their saga deadline',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      targets: [new targets.LambdaFunction(sweeper, scheduledTarget(this.sweepFailures.queue))],
    });
  }

  /** What the orders API needs of the saga: to start its executions, and to read them for their trace. */
  private letOrdersStartAndTrace({ config, orders }: OrderSagaProps) {
    // The fast path: the placing request starts the saga itself once its append has committed (the
    // rule above stays the guarantee; ReserveStock's claim keeps one effective execution per order).
    const sagaArn = orderSagaEnvironment.write({ orderSagaArn: this.stateMachine.stateMachineArn });
    for (const [name, value] of Object.entries(sagaArn)) orders.api.addEnvironment(name, value);
    this.stateMachine.grantStartExecution(orders.api);

    // The trace of `GET /orders/{id}/saga` reads this machine's executions.
    const executionKind = config.workflowType === 'EXPRESS' ? 'express' : 'execution';
    // cdk-nag names the region and account as the template has them: pseudo parameters, or the literals
    // of a stack pinned to its account (config/stages.ts).
    const { region, account } = this.stateMachine.env;
    const inArn = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<${pseudo}>` : value);
    acknowledgeNag(
      orders.api.role!,
      `IAM5[Resource::arn:aws:states:${inArn(region, 'AWS::Region')}:${inArn(account, 'AWS::AccountId')}:${executionKind}:<${logicalIdOf(this.stateMachine)}.Name>:*]`,
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

/** Every step is one transaction across the modules' tables (the saga owns the cross-module writes). */
function sagaEnvironment({ accounts, inventory, orders, payments }: OrderSagaProps) {
  return {
    ...ordersEnvironment.write({ ordersTable: orders.events.tableName }),
    ...paymentsEnvironment.write({ paymentsTable: payments.events.tableName }),
    ...accountsEnvironment.write({ accountsTable: accounts.events.tableName }),
    ...inventory.commandEnvironment,
  };
}

/** Event stores are append-only: reads and conditional puts, no updates or deletes. */
function grantSagaWrites({ accounts, inventory, orders, payments }: OrderSagaProps, fn: lambda.IFunction) {
  grantAppends(orders.events, fn);
  grantAppends(inventory.events, fn);
  grantAppends(payments.events, fn);
  grantAppends(accounts.events, fn);
}
