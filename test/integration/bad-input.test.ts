import {
  apiUrl,
  createCustomer,
  createProduct,
  get,
  post,
  quiescentWrites,
  type RequestHeaders,
  stillQuiescent,
  withDefaults,
} from '../support/api';
import { checkAnswer } from '../support/contract';

/**
 * Bad input against every route of the contract (shared/api.md): each
 * case must answer its 4xx in the error shape, name the offending fields, and
 * change nothing — no DynamoDB item write anywhere (the local cloud's write
 * counters), and the aggregate it aimed at as it was.
 */

interface Fixtures {
  customerId: string;
  productId: string;
  otherProductId: string;
  reservationId: string;
  otherReservationId: string;
}

/** A request body as sent on the wire; `type: null` sends no content-type at all. */
interface Payload {
  readonly raw: string | Uint8Array;
  readonly type: string | null;
}

type Aggregate = 'product' | 'customer';

interface Case {
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: (f: Fixtures) => string;
  readonly body?: (f: Fixtures) => Payload | undefined;
  readonly headers?: Record<string, string>;
  readonly status: number;
  readonly code: string;
  /** Each must appear as a `details[].field`. */
  readonly fields?: readonly string[];
  /** A field's one `details[].message`, in words a client can show (not zod's bare "Invalid input"). */
  readonly messages?: Readonly<Record<string, string>>;
  /** Each must appear as a `details[].id` (unknown ids on POST /orders). */
  readonly ids?: (f: Fixtures) => readonly string[];
  readonly aggregates?: readonly Aggregate[];
  /**
   * The events table (its logical id's prefix) where the refusal is remembered: a request with an
   * Idempotency-Key that the command refused after it ran (an unknown customer or product, too little
   * stock) writes one item, the refusal, so that a repeat gets the same answer (functions/shared/
   * idempotency.ts). Nothing else changes.
   */
  readonly remembersRefusalIn?: string;
}

const json = (value: unknown): Payload => ({ raw: JSON.stringify(value), type: 'application/json' });
const raw = (text: string, type: string | null = 'application/json'): Payload => ({
  raw: type === null ? new TextEncoder().encode(text) : text,
  type,
});

const hex32 = (digit: string) => digit.repeat(32);
const UNKNOWN = {
  customer: `cus_${hex32('0')}`,
  product: `prd_${hex32('0')}`,
  product2: `prd_${hex32('1')}`,
  reservation: `res_${hex32('0')}`,
  order: `ord_${hex32('0')}`,
  payment: `pay_${hex32('0')}`,
};
const MAX_BODY = 64 * 1024;
const TWO_53 = 2 ** 53;

/** Malformed or unknown ids for a path segment, already URL-encoded. */
const badIds = (prefix: string, unknown: string, foreign: (f: Fixtures) => string) =>
  [
    ['unknown, well-formed id', () => unknown],
    ['garbage id', () => 'nope'],
    ['id with the wrong prefix (another kind of resource)', foreign],
    ['id with upper-case hex', () => `${prefix}_${'A'.repeat(32)}`],
    ['id one hex digit short', () => `${prefix}_${'0'.repeat(31)}`],
    ['id one hex digit long', () => `${prefix}_${'0'.repeat(33)}`],
    ['prefix only', () => `${prefix}_`],
    ['2000-char id', () => `${prefix}_${'a'.repeat(1996)}`],
    ['id with spaces and quotes (encoded)', () => encodeURIComponent(`${prefix}_ "x' OR 1=1`)],
    ['id with an encoded slash', () => encodeURIComponent(`${prefix}_a/b`)],
    ['id with an encoded NUL', () => `${prefix}_%00`],
    ['unicode id', () => encodeURIComponent(`${prefix}_ü✓`)],
  ] as const satisfies readonly (readonly [string, (f: Fixtures) => string])[];

/**
 * The cases every JSON POST shares: the body's envelope (media type, syntax,
 * size, kind of value) and the Idempotency-Key header's bounds.
 */
function envelopeCases(
  path: (f: Fixtures) => string,
  valid: (f: Fixtures) => Record<string, unknown>,
  aggregates: readonly Aggregate[] = [],
): Case[] {
  const c = (
    name: string,
    body: ((f: Fixtures) => Payload | undefined) | undefined,
    status: number,
    code: string,
    extra: Partial<Case> = {},
  ): Case => ({
    name,
    method: 'POST',
    path,
    ...(body ? { body } : {}),
    status,
    code,
    aggregates,
    ...extra,
  });
  const padded = (f: Fixtures, bytes: number) => {
    // A valid body plus one padding field, `bytes` long in all.
    const skeleton = JSON.stringify({ ...valid(f), pad: '' });
    return raw(JSON.stringify({ ...valid(f), pad: 'x'.repeat(bytes - Buffer.byteLength(skeleton)) }));
  };
  return [
    c(
      'malformed JSON: truncated',
      (f) => raw(JSON.stringify(valid(f)).slice(0, -1)),
      400,
      'VALIDATION_ERROR',
      {
        fields: ['(body)'],
      },
    ),
    c('malformed JSON: single quotes, bare keys', () => raw("{name: 'x'}"), 400, 'VALIDATION_ERROR', {
      fields: ['(body)'],
    }),
    c(
      'malformed JSON: trailing comma',
      (f) => raw(`${JSON.stringify(valid(f)).slice(0, -1)},}`),
      400,
      'VALIDATION_ERROR',
      {
        fields: ['(body)'],
      },
    ),
    c('malformed JSON: two documents', (f) => raw(`${JSON.stringify(valid(f))}{}`), 400, 'VALIDATION_ERROR', {
      fields: ['(body)'],
    }),
    c('malformed JSON: NaN literal', () => raw('{"quantity": NaN}'), 400, 'VALIDATION_ERROR', {
      fields: ['(body)'],
    }),
    c('no body at all', undefined, 400, 'VALIDATION_ERROR', { fields: ['(body)'] }),
    c('empty body with content-type JSON', () => raw(''), 400, 'VALIDATION_ERROR', { fields: ['(body)'] }),
    c('whitespace-only body', () => raw('   \n '), 400, 'VALIDATION_ERROR', { fields: ['(body)'] }),
    c('JSON null', () => raw('null'), 400, 'VALIDATION_ERROR', { fields: ['(body)'] }),
    c('JSON array of the valid body', (f) => json([valid(f)]), 400, 'VALIDATION_ERROR', {
      fields: ['(body)'],
    }),
    c('JSON string', () => json('hello'), 400, 'VALIDATION_ERROR', { fields: ['(body)'] }),
    c('JSON number', () => raw('42'), 400, 'VALIDATION_ERROR', { fields: ['(body)'] }),
    c('JSON true', () => raw('true'), 400, 'VALIDATION_ERROR', { fields: ['(body)'] }),
    c(
      'valid JSON sent as text/plain',
      (f) => raw(JSON.stringify(valid(f)), 'text/plain'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ),
    c(
      'form-encoded body',
      () => raw('quantity=1&name=x', 'application/x-www-form-urlencoded'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ),
    c('XML body', () => raw('<quantity>1</quantity>', 'application/xml'), 415, 'UNSUPPORTED_MEDIA_TYPE'),
    c(
      'binary body',
      () => ({ raw: new Uint8Array([0, 159, 146, 150, 255]), type: 'application/octet-stream' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ),
    c(
      'valid JSON with no content-type',
      (f) => raw(JSON.stringify(valid(f)), null),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ),
    c(
      'multipart body',
      () => raw('--b\r\n\r\nx\r\n--b--', 'multipart/form-data; boundary=b'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ),
    c('valid JSON body one byte over 64 KiB', (f) => padded(f, MAX_BODY + 1), 413, 'PAYLOAD_TOO_LARGE'),
    c('1 MiB body', (f) => padded(f, 1024 * 1024), 413, 'PAYLOAD_TOO_LARGE'),
    c('malformed JSON over 64 KiB', () => raw(`{"x": "${'y'.repeat(MAX_BODY)}`), 413, 'PAYLOAD_TOO_LARGE'),
    c('unknown field', (f) => json({ ...valid(f), admin: true }), 400, 'VALIDATION_ERROR', {
      fields: ['admin'],
    }),
    c('two unknown fields', (f) => json({ ...valid(f), admin: true, note: 'x' }), 400, 'VALIDATION_ERROR', {
      fields: ['admin', 'note'],
    }),
    c(
      'a "__proto__" key',
      (f) => raw(`${JSON.stringify(valid(f)).slice(0, -1)},"__proto__":{"admin":true}}`),
      400,
      'VALIDATION_ERROR',
      { fields: ['__proto__'] },
    ),
    c('Idempotency-Key of 0 chars', (f) => json(valid(f)), 400, 'VALIDATION_ERROR', {
      headers: { 'idempotency-key': '' },
      fields: ['Idempotency-Key'],
    }),
    c('Idempotency-Key of 129 chars', (f) => json(valid(f)), 400, 'VALIDATION_ERROR', {
      headers: { 'idempotency-key': 'k'.repeat(129) },
      fields: ['Idempotency-Key'],
    }),
    c('Idempotency-Key of 1000 chars', (f) => json(valid(f)), 400, 'VALIDATION_ERROR', {
      headers: { 'idempotency-key': 'k'.repeat(1000) },
      fields: ['Idempotency-Key'],
    }),
  ];
}

/** `field` set to each wrong-typed value: string/number/bool/null/array/object as they do not fit. */
function wrongTypes(kind: 'string' | 'integer'): [string, unknown][] {
  const common: [string, unknown][] = [
    ['null', null],
    ['true', true],
    ['an array', [1]],
    ['an empty array', []],
    ['an object', { value: 1 }],
  ];
  return kind === 'string'
    ? [['a number', 42], ['zero', 0], ...common]
    : [
        ['a numeric string', '5'],
        ['an empty string', ''],
        ['"NaN"', 'NaN'],
        ['"Infinity"', 'Infinity'],
        ['"1e3"', '1e3'],
        ['a float', 1.5],
        ['a tiny float', 1.0000001],
        ...common,
      ];
}

function fieldCases(
  path: (f: Fixtures) => string,
  valid: (f: Fixtures) => Record<string, unknown>,
  field: string,
  values: [string, unknown][],
  aggregates: readonly Aggregate[] = [],
): Case[] {
  return values.map(([label, value]) => ({
    name: `${field} ${label}`,
    method: 'POST',
    path,
    body: (f) => json({ ...valid(f), [field]: value }),
    status: 400,
    code: 'VALIDATION_ERROR',
    fields: [field],
    aggregates,
  }));
}

const missing = (
  path: (f: Fixtures) => string,
  valid: (f: Fixtures) => Record<string, unknown>,
  fields: readonly string[],
  aggregates: readonly Aggregate[] = [],
): Case[] => [
  ...fields.map(
    (field): Case => ({
      name: `missing ${field}`,
      method: 'POST',
      path,
      body: (f) => {
        const { [field]: _omit, ...rest } = valid(f);
        return json(rest);
      },
      status: 400,
      code: 'VALIDATION_ERROR',
      fields: [field],
      aggregates,
    }),
  ),
  {
    name: 'empty object',
    method: 'POST',
    path,
    body: () => json({}),
    status: 400,
    code: 'VALIDATION_ERROR',
    fields,
    aggregates,
  },
];

const notFound = (
  method: Case['method'],
  path: (f: Fixtures) => string,
  body?: (f: Fixtures) => Payload,
  aggregates: readonly Aggregate[] = [],
) => ({ method, path, ...(body ? { body } : {}), status: 404, code: 'NOT_FOUND', aggregates });

// ---- POST /customers ---------------------------------------------------------------------------
const customersPath = () => '/customers';
const validCustomer = () => ({ name: 'Ann Example', email: 'ann@example.com', creditLimitCents: 5000 });
const customerCases: Case[] = [
  ...envelopeCases(customersPath, validCustomer),
  ...missing(customersPath, () => ({ name: 'Ann', email: 'ann@example.com' }), ['name', 'email']),
  ...fieldCases(customersPath, validCustomer, 'name', [
    ...wrongTypes('string'),
    ['empty', ''],
    ['only spaces', '    '],
    ['201 chars', 'n'.repeat(201)],
    ['10000 chars', 'n'.repeat(10_000)],
  ]),
  ...fieldCases(customersPath, validCustomer, 'email', [
    ...wrongTypes('string'),
    ['empty', ''],
    ['without @', 'ann.example.com'],
    ['without a domain', 'ann@'],
    ['without a local part', '@example.com'],
    ['with a space', 'ann example@example.com'],
    ['with two @', 'ann@@example.com'],
    ['over 254 chars', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(59)}.com`],
  ]),
  ...fieldCases(customersPath, validCustomer, 'creditLimitCents', [
    ...wrongTypes('integer'),
    ['negative', -1],
    ['-0.5', -0.5],
    ['2^53', TWO_53],
    ['-2^53', -TWO_53],
    ['1e300', 1e300],
  ]),
  {
    name: 'creditLimitCents 1e400 (Infinity after parsing)',
    method: 'POST',
    path: customersPath,
    body: () => raw('{"name":"Ann","email":"ann@example.com","creditLimitCents":1e400}'),
    status: 400,
    code: 'VALIDATION_ERROR',
    fields: ['creditLimitCents'],
  },
  {
    name: 'creditLimitCents 2^53 is one fault, said once',
    method: 'POST',
    path: customersPath,
    body: () => json({ ...validCustomer(), creditLimitCents: TWO_53 }),
    status: 400,
    code: 'VALIDATION_ERROR',
    messages: { creditLimitCents: 'Too big: expected int to be <=9007199254740991' },
  },
  {
    name: 'every field wrong at once',
    method: 'POST',
    path: customersPath,
    body: () => json({ name: 'n'.repeat(201), email: 'nope', creditLimitCents: -5 }),
    status: 400,
    code: 'VALIDATION_ERROR',
    fields: ['name', 'email', 'creditLimitCents'],
    // The bundles load zod's English messages (functions/package.json keeps shared/zod.ts's side effect).
    messages: {
      name: 'Too big: expected string to have <=200 characters',
      email: 'Invalid email address',
      creditLimitCents: 'Too small: expected number to be >=0',
    },
  },
  {
    name: 'a body of exactly 64 KiB is read (and refused for its over-long name)',
    method: 'POST',
    path: customersPath,
    body: () => {
      const skeleton = JSON.stringify({ name: '', email: 'ann@example.com' });
      return json({ name: 'n'.repeat(MAX_BODY - Buffer.byteLength(skeleton)), email: 'ann@example.com' });
    },
    status: 400,
    code: 'VALIDATION_ERROR',
    fields: ['name'],
  },
];

// ---- POST /products ----------------------------------------------------------------------------
const productsPath = () => '/products';
const validProduct = () => ({ sku: 'SKU-BAD-1', name: 'Widget', priceCents: 1250, stock: 5 });
const productCases: Case[] = [
  ...envelopeCases(productsPath, validProduct),
  ...missing(productsPath, validProduct, ['sku', 'name', 'priceCents', 'stock']),
  ...fieldCases(productsPath, validProduct, 'sku', [
    ...wrongTypes('string'),
    ['empty', ''],
    ['only spaces', '   '],
    ['65 chars', 's'.repeat(65)],
  ]),
  ...fieldCases(productsPath, validProduct, 'name', [
    ...wrongTypes('string'),
    ['empty', ''],
    ['201 chars', 'n'.repeat(201)],
  ]),
  ...fieldCases(productsPath, validProduct, 'priceCents', [
    ...wrongTypes('integer'),
    ['0', 0],
    ['negative', -100],
    ['2^53', TWO_53],
    ['12.50 (a float price)', 12.5],
  ]),
  ...fieldCases(productsPath, validProduct, 'stock', [
    ...wrongTypes('integer'),
    ['negative', -1],
    ['2^53', TWO_53],
  ]),
  {
    name: 'every field wrong at once',
    method: 'POST',
    path: productsPath,
    body: () => json({ sku: 's'.repeat(65), name: '', priceCents: 0, stock: -1 }),
    status: 400,
    code: 'VALIDATION_ERROR',
    fields: ['sku', 'name', 'priceCents', 'stock'],
  },
];

// ---- POST /products/{id}/reservations ----------------------------------------------------------
const reservePath = (f: Fixtures) => `/products/${f.productId}/reservations`;
const validQuantity = () => ({ quantity: 1 });
const P: readonly Aggregate[] = ['product'];
const reservationCases: Case[] = [
  ...envelopeCases(reservePath, validQuantity, P),
  ...missing(reservePath, validQuantity, ['quantity'], P),
  ...fieldCases(
    reservePath,
    validQuantity,
    'quantity',
    [
      ...wrongTypes('integer'),
      ['0', 0],
      ['negative', -1],
      ['1001', 1001],
      ['2^53', TWO_53],
      ['-2^53', -TWO_53],
    ],
    P,
  ),
  ...badIds('prd', UNKNOWN.product, (f) => f.customerId).map(
    ([label, id]): Case => ({
      name: `${label} (valid body)`,
      ...notFound(
        'POST',
        (f) => `/products/${id(f)}/reservations`,
        () => json({ quantity: 1 }),
        P,
      ),
      // A well-formed id is looked up, and the refusal remembered; a malformed one is refused before.
      ...(label === 'unknown, well-formed id' ? { remembersRefusalIn: 'InventoryEventsTable' } : {}),
    }),
  ),
  {
    name: 'more than is available: 409 INSUFFICIENT_STOCK, nothing held',
    method: 'POST',
    path: reservePath,
    body: () => json({ quantity: 9 }),
    status: 409,
    code: 'INSUFFICIENT_STOCK',
    aggregates: P,
    remembersRefusalIn: 'InventoryEventsTable',
  },
];

// ---- DELETE /products/{id}/reservations/{rid} --------------------------------------------------
const releaseCases: Case[] = [
  ...badIds('res', UNKNOWN.reservation, (f) => f.productId).map(
    ([label, id]): Case => ({
      name: `reservation: ${label}`,
      ...notFound('DELETE', (f) => `/products/${f.productId}/reservations/${id(f)}`, undefined, P),
    }),
  ),
  ...badIds('prd', UNKNOWN.product, (f) => f.customerId).map(
    ([label, id]): Case => ({
      name: `product: ${label}, with a real reservation id`,
      ...notFound('DELETE', (f) => `/products/${id(f)}/reservations/${f.reservationId}`, undefined, P),
    }),
  ),
  {
    name: "another product's reservation",
    ...notFound(
      'DELETE',
      (f) => `/products/${f.productId}/reservations/${f.otherReservationId}`,
      undefined,
      P,
    ),
  },
  {
    name: 'a reservation under the wrong product',
    ...notFound(
      'DELETE',
      (f) => `/products/${f.otherProductId}/reservations/${f.reservationId}`,
      undefined,
      P,
    ),
  },
];

// ---- POST /products/{id}/restock ---------------------------------------------------------------
const restockPath = (f: Fixtures) => `/products/${f.productId}/restock`;
const restockCases: Case[] = [
  ...envelopeCases(restockPath, validQuantity, P),
  ...missing(restockPath, validQuantity, ['quantity'], P),
  ...fieldCases(
    restockPath,
    validQuantity,
    'quantity',
    [...wrongTypes('integer'), ['0', 0], ['negative', -5], ['2^53', TWO_53], ['1e300', 1e300]],
    P,
  ),
  ...badIds('prd', UNKNOWN.product, (f) => f.customerId).map(
    ([label, id]): Case => ({
      name: `${label} (valid body)`,
      ...notFound(
        'POST',
        (f) => `/products/${id(f)}/restock`,
        () => json({ quantity: 5 }),
        P,
      ),
    }),
  ),
];

// ---- POST /orders ------------------------------------------------------------------------------
const ordersPath = () => '/orders';
const validOrder = (f: Fixtures) => ({
  customerId: f.customerId,
  items: [{ productId: f.productId, quantity: 1 }],
});
const CP: readonly Aggregate[] = ['customer', 'product'];
const withItem = (item: Record<string, unknown>) => (f: Fixtures) =>
  json({ customerId: f.customerId, items: [item] });
const distinctProducts = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    productId: `prd_${i.toString(16).padStart(32, '0')}`,
    quantity: 1,
  }));
const orderCase = (
  name: string,
  body: (f: Fixtures) => Payload,
  fields: readonly string[],
  status = 400,
  code = 'VALIDATION_ERROR',
): Case => ({
  name,
  method: 'POST',
  path: ordersPath,
  body,
  status,
  code,
  fields,
  aggregates: CP,
  ...(status === 404 ? { remembersRefusalIn: 'OrdersEventsTable' } : {}),
});
const orderCases: Case[] = [
  ...envelopeCases(ordersPath, validOrder, CP),
  // customerId may be left out: it is then the caller's (contract v2); only items is required.
  ...missing(ordersPath, validOrder, ['items'], CP),
  ...fieldCases(ordersPath, validOrder, 'customerId', [...wrongTypes('string'), ['empty', '']], CP),
  ...fieldCases(
    ordersPath,
    validOrder,
    'items',
    [
      ['0 items', []],
      ['26 items', distinctProducts(26)],
      ['a string', 'prd_x'],
      ['an object', { productId: 'x', quantity: 1 }],
      ['null', null],
      ['a number', 3],
    ],
    CP,
  ),
  orderCase('an item that is a string', (f) => json({ customerId: f.customerId, items: [f.productId] }), [
    'items.0',
  ]),
  orderCase('an item that is null', (f) => json({ customerId: f.customerId, items: [null] }), ['items.0']),
  ...(
    [
      ['quantity 0', 0],
      ['quantity 1001', 1001],
      ['quantity -1', -1],
      ['quantity 2^53', TWO_53],
      ['quantity a float', 1.5],
      ['quantity a numeric string', '2'],
      ['quantity null', null],
      ['quantity true', true],
    ] as const
  ).map(([name, quantity]) =>
    orderCase(name, (f) => withItem({ productId: f.productId, quantity })(f), ['items.0.quantity']),
  ),
  orderCase('item without quantity', (f) => withItem({ productId: f.productId })(f), ['items.0.quantity']),
  orderCase('item without productId', (f) => withItem({ quantity: 1 })(f), ['items.0.productId']),
  orderCase('productId a number', (f) => withItem({ productId: 7, quantity: 1 })(f), ['items.0.productId']),
  orderCase('productId empty', (f) => withItem({ productId: '', quantity: 1 })(f), ['items.0.productId']),
  orderCase(
    'unknown field in an item',
    (f) => withItem({ productId: f.productId, quantity: 1, priceCents: 1 })(f),
    ['items.0.priceCents'],
  ),
  orderCase(
    'duplicate productIds',
    (f) =>
      json({
        customerId: f.customerId,
        items: [
          { productId: f.productId, quantity: 1 },
          { productId: f.productId, quantity: 2 },
        ],
      }),
    ['items.1.productId'],
  ),
  orderCase(
    'the second of three items is bad',
    (f) =>
      json({
        customerId: f.customerId,
        items: [
          { productId: f.productId, quantity: 1 },
          { productId: f.otherProductId, quantity: 0 },
          { productId: UNKNOWN.product, quantity: 1 },
        ],
      }),
    ['items.1.quantity'],
  ),
  orderCase(
    'unknown customer (well-formed id)',
    (f) => json({ customerId: UNKNOWN.customer, items: [{ productId: f.productId, quantity: 1 }] }),
    ['customerId'],
    404,
    'NOT_FOUND',
  ),
  orderCase(
    'malformed customer id',
    (f) => json({ customerId: 'customer-1', items: [{ productId: f.productId, quantity: 1 }] }),
    ['customerId'],
    404,
    'NOT_FOUND',
  ),
  orderCase(
    'a product id as the customer id',
    (f) => json({ customerId: f.productId, items: [{ productId: f.productId, quantity: 1 }] }),
    ['customerId'],
    404,
    'NOT_FOUND',
  ),
  orderCase(
    'unknown product (well-formed id)',
    (f) => withItem({ productId: UNKNOWN.product, quantity: 1 })(f),
    ['items.0.productId'],
    404,
    'NOT_FOUND',
  ),
  orderCase(
    'a customer id as a product id',
    (f) => withItem({ productId: f.customerId, quantity: 1 })(f),
    ['items.0.productId'],
    404,
    'NOT_FOUND',
  ),
  {
    ...orderCase(
      'unknown customer and two unknown products among three items: each is named',
      (f) =>
        json({
          customerId: UNKNOWN.customer,
          items: [
            { productId: UNKNOWN.product, quantity: 1 },
            { productId: f.productId, quantity: 1 },
            { productId: 'prd_nope', quantity: 1 },
          ],
        }),
      ['customerId', 'items.0.productId', 'items.2.productId'],
      404,
      'NOT_FOUND',
    ),
    ids: () => [UNKNOWN.customer, UNKNOWN.product, 'prd_nope'],
  },
];

// ---- GETs --------------------------------------------------------------------------------------
const getCases = (route: string, prefix: string, unknown: string, foreign: (f: Fixtures) => string) =>
  badIds(prefix, unknown, foreign).map(
    ([label, id]): Case => ({ name: label, ...notFound('GET', (f) => route.replace('{id}', id(f))) }),
  );

const routes: [string, Case[]][] = [
  ['POST /customers', customerCases],
  ['GET /customers/{customerId}', getCases('/customers/{id}', 'cus', UNKNOWN.customer, (f) => f.productId)],
  ['POST /products', productCases],
  ['GET /products/{productId}', getCases('/products/{id}', 'prd', UNKNOWN.product, (f) => f.customerId)],
  ['POST /products/{productId}/reservations', reservationCases],
  ['DELETE /products/{productId}/reservations/{reservationId}', releaseCases],
  ['POST /products/{productId}/restock', restockCases],
  ['POST /orders', orderCases],
  ['GET /orders/{orderId}', getCases('/orders/{id}', 'ord', UNKNOWN.order, (f) => f.productId)],
  ['GET /payments/{paymentId}', getCases('/payments/{id}', 'pay', UNKNOWN.payment, (f) => f.customerId)],
];

// ---- the harness -------------------------------------------------------------------------------
interface Sent {
  readonly status: number;
  readonly text: string;
  readonly body: unknown;
}

async function send(
  baseUrl: string,
  method: string,
  path: string,
  payload?: Payload,
  headers: RequestHeaders = {},
): Promise<Sent> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    // As the operator, with an Idempotency-Key where one is required, unless the case sets its own.
    headers: {
      ...(payload?.type ? { 'content-type': payload.type } : {}),
      ...(await withDefaults(method, path, headers)),
    },
    ...(payload ? { body: payload.raw } : {}),
  });
  const text = await response.text();
  checkAnswer({ method, path, status: response.status, headers: response.headers, text });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, text, body };
}

const STACK_TRACE = /\n\s+at |\bat [\w.<>]+ \(|\.[jt]s:\d+|node_modules|webpack:|Error: /;

function expectContractError(
  r: Sent,
  c: Pick<Case, 'status' | 'code' | 'fields' | 'messages'>,
  ids: readonly string[] = [],
) {
  // One assertion carrying the whole response, so a failure shows exactly what came back.
  const seen = { status: r.status, body: r.body ?? r.text };
  expect(seen).toEqual({
    status: c.status,
    body: {
      error: { code: c.code, message: expect.any(String), details: expect.any(Array) },
    },
  });
  expect(r.text).not.toMatch(STACK_TRACE);
  const details = (r.body as { error: { details: { field?: unknown; id?: unknown; message?: unknown }[] } })
    .error.details;
  if (c.fields) expect(details.map((d) => d.field)).toEqual(expect.arrayContaining([...c.fields]));
  for (const [field, message] of Object.entries(c.messages ?? {})) {
    expect({ field, messages: details.filter((d) => d.field === field).map((d) => d.message) }).toEqual({
      field,
      messages: [message],
    });
  }
  if (ids.length) expect(details.map((d) => d.id)).toEqual(expect.arrayContaining([...ids]));
}

let fx: Fixtures;

const aggregateOf = async (kind: Aggregate) => {
  if (kind === 'product') {
    const r = await get<{ available: number; reserved: number; sold: number }>(`/products/${fx.productId}`);
    return { available: r.body.available, reserved: r.body.reserved, sold: r.body.sold };
  }
  const r = await get<Record<string, unknown>>(`/customers/${fx.customerId}`);
  return {
    creditLimitCents: r.body.creditLimitCents,
    availableCreditCents: r.body.availableCreditCents,
    status: r.body.status,
  };
};

beforeAll(async () => {
  const customer = await createCustomer({ name: 'Bad Input', email: 'bad-input@example.com' });
  const product = await createProduct({ stock: 10 });
  const other = await createProduct({ stock: 5 });
  const held = await post<{ reservationId: string }>(`/products/${product.productId}/reservations`, {
    quantity: 2,
  });
  const otherHeld = await post<{ reservationId: string }>(`/products/${other.productId}/reservations`, {
    quantity: 1,
  });
  expect([held.status, otherHeld.status]).toEqual([201, 201]);
  fx = {
    customerId: customer.customerId,
    productId: product.productId,
    otherProductId: other.productId,
    reservationId: held.body.reservationId,
    otherReservationId: otherHeld.body.reservationId,
  };
  await quiescentWrites();
  expect(await aggregateOf('product')).toEqual({ available: 8, reserved: 2, sold: 0 });
});

/** The writes at the last case's end, when the cloud was quiescent: the next case's start, unless it moved. */
let lastQuiescent: Record<string, number> | undefined;

describe.each(routes)('%s', (_route, cases) => {
  test.each(cases)('$name → $status $code', async (c) => {
    const aggregates = c.aggregates ?? [];
    const before = await stillQuiescent(lastQuiescent);
    const aggregatesBefore = await Promise.all(aggregates.map(aggregateOf));

    const r = await send(apiUrl(), c.method, c.path(fx), c.body?.(fx), c.headers);
    expectContractError(r, c, c.ids?.(fx) ?? []);

    const after = await quiescentWrites();
    lastQuiescent = after;
    const remembered = c.remembersRefusalIn;
    if (remembered) {
      // One write, of the refusal remembered, in the table named; nothing else anywhere.
      const moved = Object.keys(after).filter((t) => after[t] !== before[t]);
      expect(moved.map((t) => [t.startsWith(remembered), (after[t] ?? 0) - (before[t] ?? 0)])).toEqual([
        [true, 1],
      ]);
    } else {
      expect(after).toEqual(before);
    }
    expect(await Promise.all(aggregates.map(aggregateOf))).toEqual(aggregatesBefore);
  });
});

/** A path that is not valid percent-encoding: a 4xx, and the API keeps answering. */
describe('malformed percent-encoding in a path', () => {
  test.each([
    ['GET', '/customers/%ZZ'],
    ['GET', '/products/prd_%E0%A4%A'],
    ['POST', '/products/%/restock'],
    ['DELETE', '/products/prd_%C0/reservations/res_x'],
    ['GET', '/orders/%'],
    ['GET', '/payments/%FF'],
  ])('%s %s → a 4xx in the contract shape, and the API keeps answering', async (method, path) => {
    const r = await send(apiUrl(), method, path, method === 'POST' ? json({ quantity: 1 }) : undefined).catch(
      (error: Error) => ({ status: 0, text: `no response: ${error.message}`, body: undefined }),
    );
    const seen = { status: r.status, body: r.body ?? r.text };
    const code = r.status === 400 ? 'VALIDATION_ERROR' : 'NOT_FOUND';
    expect(seen).toEqual({
      status: r.status === 400 ? 400 : 404,
      body: { error: { code, message: expect.any(String), details: expect.any(Array) } },
    });
    const after = await send(apiUrl(), 'GET', `/customers/${UNKNOWN.customer}`).catch((error: Error) => ({
      status: 0,
      text: `no response: ${error.message}`,
      body: undefined,
    }));
    expect(after.status).toBe(404);
  });
});
