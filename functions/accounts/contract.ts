/** The accounts module's HTTP contract: what `POST /customers` takes and what its routes answer. */

import {
  authResponses,
  bodyResponses,
  CustomerExistsError,
  commonResponses,
  ForbiddenError,
  keyReusedResponse,
  notFoundResponse,
  type OperationSpec,
  operationOf,
} from '../shared/contract';
import { exampleId, id, instant, responseSchema } from '../shared/schemas';
import * as z from '../shared/zod';
import { RegisterCustomer } from './requests';
import { ACCOUNTS_ROUTE_SCOPES, ACCOUNTS_ROUTES } from './seams';

export const Customer = responseSchema(
  z.strictObject({
    customerId: id('cus'),
    name: z.string(),
    email: z.string(),
    creditLimitCents: z.number().check(z.int()),
    availableCreditCents: z
      .number()
      .check(z.int(), z.meta({ description: 'the limit minus captured, unrefunded payments' })),
    status: z.literal('ACTIVE'),
    createdAt: instant(),
  }),
  {
    id: 'Customer',
    examples: [
      {
        customerId: exampleId('cus'),
        name: 'Ada',
        email: 'ada@example.com',
        creditLimitCents: 500000,
        availableCreditCents: 487500,
        status: 'ACTIVE',
        createdAt: '2026-11-23T14:05:09.123Z',
      },
    ],
  },
);

const customerId = { description: 'the customer’s id', prefix: 'cus' };

export const accountsOperations: readonly OperationSpec[] = [
  {
    ...operationOf(ACCOUNTS_ROUTES, 'registerCustomer', ACCOUNTS_ROUTE_SCOPES),
    tag: 'Accounts',
    summary: 'Register a customer',
    body: RegisterCustomer,
    idempotent: true,
    responses: {
      201: { description: 'Registered.', schema: Customer, headers: ['location'] },
      ...bodyResponses,
      403: {
        description:
          '`creditLimitCents` or `ownerSub` from a shop token (only an admin may set them): `FORBIDDEN`; or a token with neither scope (API Gateway’s `{"message":"Forbidden"}`).',
        schema: responseSchema(z.union([ForbiddenError, authResponses[403]!.schema!]), {
          id: 'RegistrationForbidden',
        }),
      },
      409: {
        description:
          'The caller’s `sub` (or the `ownerSub` an admin named) has a customer record already, or the `Idempotency-Key` was used with a different body.',
        schema: responseSchema(z.union([CustomerExistsError, keyReusedResponse.schema!]), {
          id: 'RegistrationConflict',
        }),
      },
      ...commonResponses,
    },
  },
  {
    ...operationOf(ACCOUNTS_ROUTES, 'getCustomer', ACCOUNTS_ROUTE_SCOPES),
    tag: 'Accounts',
    summary: 'Read a customer',
    description: 'A shop token reads only its own customer: another’s answers 404, as an unknown id does.',
    pathParameters: { customerId },
    responses: {
      200: { description: 'The customer.', schema: Customer },
      404: notFoundResponse('No such customer, or not the caller’s.'),
      ...commonResponses,
    },
  },
  {
    ...operationOf(ACCOUNTS_ROUTES, 'getOwnCustomer', ACCOUNTS_ROUTE_SCOPES),
    tag: 'Accounts',
    summary: 'Read the caller’s own customer',
    description: 'The customer record that belongs to the token’s `sub`.',
    responses: {
      200: { description: 'The caller’s customer.', schema: Customer },
      404: notFoundResponse('The caller has not registered.'),
      ...commonResponses,
    },
  },
];
