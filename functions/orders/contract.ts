/** The orders module's HTTP contract: placing an order, reading it and its saga. */

import type { SagaStatus, SagaStep } from '../saga';
import {
  bodyResponses,
  commonResponses,
  keyReusedResponse,
  notFoundResponse,
  type OperationSpec,
  operationOf,
} from '../shared/contract';
import { everyValueOf, exampleId, id, instant, responseSchema } from '../shared/schemas';
import * as z from '../shared/zod';
import type { CancellationReason, OrderStatus } from './domain';
import { PlaceOrder } from './requests';
import { ORDERS_ROUTE_SCOPES, ORDERS_ROUTES } from './seams';

export const OrderAccepted = responseSchema(
  z.strictObject({
    orderId: id('ord'),
    status: z.literal('PENDING'),
    totalCents: z
      .number()
      .check(z.int(), z.meta({ description: 'the sum of `priceCents × quantity` at placement' })),
  }),
  {
    id: 'OrderAccepted',
    description: 'The order is placed; its saga runs. Follow it at `Location` (`GET /orders/{orderId}`).',
    examples: [{ orderId: exampleId('ord'), status: 'PENDING', totalCents: 2500 }],
  },
);

export const Order = responseSchema(
  z.strictObject({
    orderId: id('ord'),
    customerId: id('cus'),
    items: z.array(
      z.strictObject({
        productId: id('prd'),
        quantity: z.number().check(z.int()),
        priceCents: z.number().check(z.int(), z.meta({ description: 'the price at placement' })),
      }),
    ),
    totalCents: z.number().check(z.int()),
    status: z.enum(everyValueOf<OrderStatus>()(['PENDING', 'CONFIRMED', 'CANCELLED'])),
    cancellationReason: z
      .optional(
        z.enum(
          everyValueOf<CancellationReason>()([
            'OUT_OF_STOCK',
            'PAYMENT_DECLINED',
            'CONFIRMATION_FAILED',
            'TIMEOUT',
            'STEP_FAILED',
          ]),
        ),
      )
      .check(z.meta({ description: 'set when CANCELLED' })),
    paymentId: z
      .optional(id('pay'))
      .check(z.meta({ description: 'the order’s payment, set when the order became final with one' })),
    createdAt: instant(),
    updatedAt: instant(),
  }),
  {
    id: 'Order',
    description: 'Every order reaches CONFIRMED or CANCELLED by its deadline.',
    examples: [
      {
        orderId: exampleId('ord'),
        customerId: exampleId('cus'),
        items: [{ productId: exampleId('prd'), quantity: 2, priceCents: 1250 }],
        totalCents: 2500,
        status: 'CONFIRMED',
        paymentId: exampleId('pay'),
        createdAt: '2026-11-23T14:05:09.123Z',
        updatedAt: '2026-11-23T14:05:09.412Z',
      },
    ],
  },
);

export const SagaTrace = responseSchema(
  z.strictObject({
    orderId: id('ord'),
    executionArn: z.string(),
    status: z.enum(everyValueOf<SagaStatus>()(['RUNNING', 'SUCCEEDED', 'COMPENSATED', 'FAILED'])),
    steps: z.array(
      z.strictObject({
        name: z.string().check(z.meta({ description: 'the state machine’s Task state' })),
        status: z.enum(everyValueOf<SagaStep['status']>()(['RUNNING', 'SUCCEEDED', 'FAILED'])),
        startedAt: instant(),
        endedAt: z.optional(instant()),
        attempts: z.number().check(z.int()),
        error: z.optional(z.strictObject({ error: z.string(), cause: z.optional(z.string()) })),
      }),
    ),
  }),
  {
    id: 'SagaTrace',
    description: 'The saga’s execution, step by step, compensations included.',
    examples: [
      {
        orderId: exampleId('ord'),
        executionArn: `arn:aws:states:us-east-1:123456789012:execution:OrderSaga:${exampleId('ord')}`,
        status: 'SUCCEEDED',
        steps: [
          {
            name: 'ReserveStock',
            status: 'SUCCEEDED',
            startedAt: '2026-11-23T14:05:09.201Z',
            endedAt: '2026-11-23T14:05:09.260Z',
            attempts: 1,
          },
        ],
      },
    ],
  },
);

const orderId = { description: 'the order’s id', prefix: 'ord' };

export const ordersOperations: readonly OperationSpec[] = [
  {
    ...operationOf(ORDERS_ROUTES, 'placeOrder', ORDERS_ROUTE_SCOPES),
    keyRequired: true,
    tag: 'Orders',
    summary: 'Place an order (starts its saga)',
    description:
      'Reserves stock for every item, captures the payment, and confirms the order, or compensates. ' +
      'With `Prefer: wait=N` the answer waits up to N seconds for the saga to end.',
    body: PlaceOrder,
    idempotent: true,
    prefer: true,
    responses: {
      201: {
        description: 'With `Prefer: wait=N`: the saga ended within N seconds; the final order.',
        schema: Order,
        headers: ['preference-applied'],
        optionalHeaders: ['location'],
      },
      202: { description: 'Placed; the saga is under way.', schema: OrderAccepted, headers: ['location'] },
      ...bodyResponses,
      404: notFoundResponse(
        'The body names an unknown customer or product (each in `details`), or another’s customer; or, without `customerId`, the caller has no customer record (`id` `me`).',
      ),
      409: keyReusedResponse,
      ...commonResponses,
    },
  },
  {
    ...operationOf(ORDERS_ROUTES, 'getOrder', ORDERS_ROUTE_SCOPES),
    tag: 'Orders',
    summary: 'Read an order',
    pathParameters: { orderId },
    responses: {
      200: { description: 'The order.', schema: Order },
      404: notFoundResponse('No such order, or another customer’s.'),
      ...commonResponses,
    },
  },
  {
    ...operationOf(ORDERS_ROUTES, 'getOrderSaga', ORDERS_ROUTE_SCOPES),
    tag: 'Orders',
    summary: 'Read an order’s saga trace',
    description:
      'From the execution’s history. On an EXPRESS stage AWS keeps no history: the trace is in the state machine’s log group.',
    pathParameters: { orderId },
    responses: {
      200: { description: 'The trace.', schema: SagaTrace },
      404: notFoundResponse('No such order, or another customer’s, or its saga has not started yet.'),
      ...commonResponses,
    },
  },
];
