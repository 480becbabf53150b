/** The inventory module's HTTP contract: products, their stock, and reservations of it. */

import {
  bodyResponses,
  commonResponses,
  HoldLimitReachedError,
  IdempotencyKeyReusedError,
  InsufficientStockError,
  keyReusedResponse,
  notFoundResponse,
  type OperationSpec,
  operationOf,
} from '../shared/contract';
import { exampleId, id, instant, responseSchema } from '../shared/schemas';
import * as z from '../shared/zod';
import { CreateProduct, ReserveStock, Restock } from './requests';
import { INVENTORY_ROUTE_SCOPES, INVENTORY_ROUTES } from './seams';

export const Product = responseSchema(
  z.strictObject({
    productId: id('prd'),
    sku: z.string(),
    name: z.string(),
    priceCents: z.number().check(z.int()),
    available: z.number().check(z.int(), z.meta({ description: 'never below 0' })),
    reserved: z.number().check(z.int()),
    sold: z.number().check(z.int()),
    createdAt: instant(),
  }),
  {
    id: 'Product',
    description: '`available + reserved + sold` is all the stock the product ever received.',
    examples: [
      {
        productId: exampleId('prd'),
        sku: 'W-1',
        name: 'Widget',
        priceCents: 1250,
        available: 7,
        reserved: 3,
        sold: 0,
        createdAt: '2026-11-23T14:05:09.123Z',
      },
    ],
  },
);

export const Reservation = responseSchema(
  z.strictObject({
    reservationId: id('res'),
    productId: id('prd'),
    quantity: z.number().check(z.int()),
    status: z.literal('RESERVED'),
    expiresAt: instant().check(
      z.meta({
        description: 'unless released or committed by then, the stock becomes available again',
      }),
    ),
  }),
  {
    id: 'Reservation',
    examples: [
      {
        reservationId: exampleId('res'),
        productId: exampleId('prd'),
        quantity: 3,
        status: 'RESERVED',
        expiresAt: '2026-11-23T14:20:09.123Z',
      },
    ],
  },
);

export const ReleasedReservation = responseSchema(
  z.strictObject({ reservationId: id('res'), status: z.literal('RELEASED') }),
  { id: 'ReleasedReservation', examples: [{ reservationId: exampleId('res'), status: 'RELEASED' }] },
);

/** Not in api.md's table: releasing a reservation its order has already sold. */
export const ReservationCommittedError = responseSchema(
  z.strictObject({
    error: z.strictObject({
      code: z.literal('RESERVATION_COMMITTED'),
      message: z.string(),
      details: z.array(z.never()),
    }),
  }),
  { id: 'ReservationCommittedError', description: 'The reservation was sold with its order.' },
);

const productId = { description: 'the product’s id', prefix: 'prd' };
const reservationId = { description: 'the reservation’s id', prefix: 'res' };

export const inventoryOperations: readonly OperationSpec[] = [
  {
    ...operationOf(INVENTORY_ROUTES, 'createProduct', INVENTORY_ROUTE_SCOPES),
    tag: 'Inventory',
    summary: 'Create a product with its initial stock',
    body: CreateProduct,
    idempotent: true,
    responses: {
      201: { description: 'Created.', schema: Product, headers: ['location'] },
      ...bodyResponses,
      409: keyReusedResponse,
      ...commonResponses,
    },
  },
  {
    ...operationOf(INVENTORY_ROUTES, 'getProduct', INVENTORY_ROUTE_SCOPES),
    tag: 'Inventory',
    summary: 'Read a product and its stock',
    pathParameters: { productId },
    responses: {
      200: { description: 'The product.', schema: Product },
      404: notFoundResponse('No such product.'),
      ...commonResponses,
    },
  },
  {
    ...operationOf(INVENTORY_ROUTES, 'reserveStock', INVENTORY_ROUTE_SCOPES),
    tag: 'Inventory',
    summary: 'Hold units of a product until they expire',
    description:
      'A shop caller holds at most the stage’s per-caller limit of one product in live reservations (admins are not limited). Only the caller that made a reservation (or an admin) may release it.',
    body: ReserveStock,
    idempotent: true,
    keyRequired: true,
    pathParameters: { productId },
    responses: {
      201: { description: 'Reserved.', schema: Reservation, headers: ['location'] },
      ...bodyResponses,
      404: notFoundResponse('No such product.'),
      409: {
        description:
          'Not enough stock available; the caller would pass its hold limit of the product; or the `Idempotency-Key` was used with a different body.',
        schema: responseSchema(
          z.union([InsufficientStockError, HoldLimitReachedError, IdempotencyKeyReusedError]),
          { id: 'ReservationConflict' },
        ),
      },
      ...commonResponses,
    },
  },
  {
    ...operationOf(INVENTORY_ROUTES, 'releaseReservation', INVENTORY_ROUTE_SCOPES),
    tag: 'Inventory',
    summary: 'Release a reservation',
    description: 'Repeating it answers the same.',
    pathParameters: { productId, reservationId },
    responses: {
      200: { description: 'Released (or released already).', schema: ReleasedReservation },
      404: notFoundResponse('No such product, or no such reservation of it, or another caller’s.'),
      409: { description: 'The reservation was sold with its order.', schema: ReservationCommittedError },
      ...commonResponses,
    },
  },
  {
    ...operationOf(INVENTORY_ROUTES, 'restockProduct', INVENTORY_ROUTE_SCOPES),
    tag: 'Inventory',
    summary: 'Receive more stock of a product',
    body: Restock,
    idempotent: true,
    pathParameters: { productId },
    responses: {
      200: { description: 'The product after the restock.', schema: Product },
      ...bodyResponses,
      404: notFoundResponse('No such product.'),
      409: keyReusedResponse,
      ...commonResponses,
    },
  },
];
