import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { customers } from '../../accounts';
import { inventoryStores } from '../../inventory';
import { sagaTrace } from '../../saga';
import { fromEnvironment } from '../../shared/aws';
import type { Caller } from '../../shared/caller';
import { ClientError, notFound } from '../../shared/errors';
import {
  type HttpRequest,
  type HttpResult,
  httpHandler,
  json,
  requireBody,
  validate,
} from '../../shared/http';
import { idempotentCreation } from '../../shared/idempotency';
import { type PollSchedule, pollUntil } from '../../shared/poll';
import { logger } from '../../shared/powertools';
import { preferredWaitSeconds } from '../../shared/prefer';
import { DeadlineRetries } from '../../shared/retries';
import { StepFunctions } from '../../shared/step-functions';
import { ordersUseCases } from '../application';
import type { Order, OrderPlaced } from '../domain';
import { acceptedOrderView, orderView } from '../http-views';
import { PlaceOrder } from '../requests';
import { ORDERS_ROUTES, orderPlacementEnvironment, orderSagaEnvironment } from '../seams';
import { ordersStore } from '../store';

const stepFunctions = new StepFunctions({ retryStrategy: new DeadlineRetries(3) });

async function executionHistory(executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await stepFunctions.getExecutionHistory({ executionArn, maxResults: 1000, nextToken });
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}
const { sagaDeadlineSeconds: SAGA_DEADLINE_SECONDS } = fromEnvironment(orderPlacementEnvironment);
const orderStore = ordersStore();
const orders = ordersUseCases(orderStore, customers(), inventoryStores(), {
  sagaDeadlineSeconds: SAGA_DEADLINE_SECONDS,
});
const { orderSagaArn: ORDER_SAGA_ARN } = fromEnvironment(orderSagaEnvironment);

/**
 * The saga's fast path: once the order's append has committed, the request
 * starts its execution itself, named after the order (a STANDARD machine
 * answers a repeat with the same execution). `OrderPlaced` reaching the bus
 * through the stream stays the guarantee; whichever execution claims the
 * order first at ReserveStock runs the saga, the other stops there. A failure
 * here is only logged: the order is placed either way.
 */
async function startSaga(placed: OrderPlaced, correlationId: string) {
  const orderId = placed.data.orderId;
  try {
    await stepFunctions.startExecution({
      stateMachineArn: ORDER_SAGA_ARN,
      name: orderId,
      // The part of the bus's OrderPlaced event that the saga reads.
      input: JSON.stringify({ detail: { type: placed.type, data: placed.data, correlationId } }),
    });
  } catch (error) {
    logger.warn('saga not started by the request; the OrderPlaced event will start it', {
      orderId,
      error: error as Error,
    });
  }
}

/** The answer to a placed order: accepted, its saga under way. */
const accepted = (order: Order) =>
  json(202, acceptedOrderView(order), { location: `/orders/${order.orderId}` });

/** An order the caller may see, or 404 (another customer's answers as an unknown id). */
async function loadOrder(caller: Caller, orderId: string) {
  const order = await orders.orderFor(caller, orderId);
  if (!order) throw notFound('order', orderId);
  return order;
}

const placeOrder = idempotentCreation(
  'ord',
  (request) => validate(PlaceOrder, requireBody(request)),
  async (input, { now, correlationId, caller }, { id: orderId, requestHash }) => {
    const placement = await orders.place(orderId, input, { now, correlationId, requestHash }, caller);
    if ('rejection' in placement) {
      const { missing } = placement.rejection;
      throw new ClientError(404, 'NOT_FOUND', 'the order names an unknown customer or product', missing);
    }
    await startSaga(placement.placed, correlationId);
    return accepted(placement.order);
  },
  async (orderId) => {
    const placement = await orders.placement(orderId);
    return placement && { requestHash: placement.requestHash, result: accepted(placement.order) };
  },
  orderStore,
  // It moves money and stock: a retry after a lost answer must find the first order, not place another.
  { keyRequired: true },
);

/**
 * When to read a waited-for order: the first read 100 ms after placing it,
 * then each gap 1.5 times the last, at most a second. Measured on the local
 * cloud, uncontended, a saga ends 40 ms after its order was placed at the
 * median and 62 ms at p90: one read. See the README for the reads
 * per waited order.
 */
export const FINAL_ORDER_POLL: PollSchedule = { firstMs: 100, factor: 1.5, maxMs: 1_000 };
/** Room kept at the end of the function's time for the last read and the answer. */
const WAIT_MARGIN_MS = 1_000;

/**
 * `Prefer: wait=N` (RFC 7240): after the order was accepted, read its newest
 * event item on `FINAL_ORDER_POLL` until the saga has ended, for N seconds
 * from the request's arrival at most (and never past the function's time). Reading the
 * order, not the execution, works alike for STANDARD and EXPRESS machines.
 * Final in time: `201` with the order as `GET` shows it. Not yet: the `202`
 * as without the header. Both say `Preference-Applied: wait=N`, since the
 * server did wait; a `wait` it does not honour (malformed, out of range) is
 * ignored and no `Preference-Applied` is sent.
 */
async function answerWhenFinal(request: HttpRequest, waitSeconds: number, acceptance: HttpResult) {
  // The acceptance is this handler's own answer (placed now or replayed): its body names the order.
  const { orderId } = JSON.parse(acceptance.body) as { orderId: string };
  const applied = { 'preference-applied': `wait=${waitSeconds}` };
  const deadlineMs = Math.min(
    // N counts from when the request reached the API, as the client counts it (RFC 7240: once received).
    request.receivedAt.getTime() + waitSeconds * 1000,
    Date.now() + request.context.getRemainingTimeInMillis() - WAIT_MARGIN_MS,
  );
  const { value: final, reads } = await pollUntil(
    () => orders.order(orderId),
    (order) => order !== undefined && order.status !== 'PENDING',
    deadlineMs,
    FINAL_ORDER_POLL,
  );
  logger.info('waited for the order to be final', {
    orderId,
    waitSeconds,
    reads,
    final: final !== undefined,
  });
  if (!final) return { ...acceptance, headers: { ...acceptance.headers, ...applied } };
  return json(201, orderView(final), { location: `/orders/${orderId}`, ...applied });
}

export const handler = httpHandler(ORDERS_ROUTES, {
  placeOrder: async (request) => {
    const acceptance = await placeOrder(request);
    // Without a `wait` it honours, nothing happens beyond placing the order: no read, no pause.
    const waitSeconds =
      acceptance.statusCode === 202 ? preferredWaitSeconds(request.headers.prefer) : undefined;
    return waitSeconds === undefined ? acceptance : answerWhenFinal(request, waitSeconds, acceptance);
  },

  getOrder: async ({ pathParameters, caller }) =>
    json(200, orderView(await loadOrder(caller, String(pathParameters.orderId)))),

  getOrderSaga: async ({ pathParameters, caller }) => {
    const orderId = String(pathParameters.orderId);
    const { sagaExecutionArn: executionArn } = await loadOrder(caller, orderId);
    if (!executionArn)
      throw new ClientError(404, 'NOT_FOUND', `the saga of order ${orderId} has not started yet`);
    const [execution, history] = await Promise.all([
      stepFunctions.describeExecution({ executionArn }),
      executionHistory(executionArn),
    ]);
    return json(200, { orderId, executionArn, ...sagaTrace(execution.status, history) });
  },
});
