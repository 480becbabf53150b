/** The payments module's HTTP contract. */

import { commonResponses, notFoundResponse, type OperationSpec, operationOf } from '../shared/contract';
import { everyValueOf, exampleId, id, instant, responseSchema } from '../shared/schemas';
import * as z from '../shared/zod';
import type { PaymentStatus } from './domain';
import { PAYMENTS_ROUTE_SCOPES, PAYMENTS_ROUTES } from './seams';

export const Payment = responseSchema(
  z.strictObject({
    paymentId: id('pay'),
    orderId: id('ord'),
    customerId: id('cus'),
    amountCents: z.number().check(z.int()),
    // A voided payment is never shown (404): the marker that none may be captured.
    status: z.enum(everyValueOf<Exclude<PaymentStatus, 'VOIDED'>>()(['CAPTURED', 'DECLINED', 'REFUNDED'])),
    createdAt: instant(),
  }),
  {
    id: 'Payment',
    description: 'For each customer, captured minus refunded never exceeds `creditLimitCents`.',
    examples: [
      {
        paymentId: exampleId('pay'),
        orderId: exampleId('ord'),
        customerId: exampleId('cus'),
        amountCents: 2500,
        status: 'CAPTURED',
        createdAt: '2026-11-23T14:05:09.380Z',
      },
    ],
  },
);

export const paymentsOperations: readonly OperationSpec[] = [
  {
    ...operationOf(PAYMENTS_ROUTES, 'getPayment', PAYMENTS_ROUTE_SCOPES),
    tag: 'Payments',
    summary: 'Read a payment',
    pathParameters: {
      paymentId: { description: 'the payment’s id (the order’s `paymentId`)', prefix: 'pay' },
    },
    responses: {
      200: { description: 'The payment.', schema: Payment },
      404: notFoundResponse('No such payment, or another customer’s.'),
      ...commonResponses,
    },
  },
];
