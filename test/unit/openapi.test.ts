import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { Customer } from '../../functions/accounts/contract';
import { customerView } from '../../functions/accounts/http-views';
import { RegisterCustomer } from '../../functions/accounts/requests';
import { OPERATIONS, openApiDocument } from '../../functions/docs/openapi';
import { referencePage } from '../../functions/docs/reference-page';
import { Product } from '../../functions/inventory/contract';
import { productView } from '../../functions/inventory/http-views';
import { CreateProduct } from '../../functions/inventory/requests';
import { Order, SagaTrace } from '../../functions/orders/contract';
import type { Order as OrderState } from '../../functions/orders/domain';
import { orderView } from '../../functions/orders/http-views';
import { Payment } from '../../functions/payments/contract';
import { paymentView } from '../../functions/payments/http-views';
import { sagaTrace } from '../../functions/saga/trace';
import { contractViolations, schemaErrors } from '../support/contract';

const document = openApiDocument();
type Json = Record<string, unknown>;

describe('the OpenAPI document', () => {
  test('the committed document and client types are what `npm run openapi` writes from the schemas', () => {
    const root = join(__dirname, '..', '..');
    const check = spawnSync(join(root, 'node_modules', '.bin', 'tsx'), ['scripts/openapi.ts', '--check'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect({ status: check.status, output: `${check.stdout}${check.stderr}`.trim() }).toEqual({
      status: 0,
      output: 'openapi/ is up to date with the contracts',
    });
  });

  test('is OpenAPI 3.1 with one operation per route of the contract, each a unique operationId', () => {
    expect(document.openapi).toBe('3.1.0');
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).toEqual(OPERATIONS.map((o) => o.route).sort());
    const ids = OPERATIONS.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('every POST takes Idempotency-Key; every route documents 429 with Retry-After, and 500', () => {
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods as Record<string, Json>)) {
        const params = JSON.stringify(op.parameters);
        expect({ route: `${method} ${path}`, idempotent: params.includes('IdempotencyKey') }).toEqual({
          route: `${method} ${path}`,
          idempotent: method === 'post',
        });
        const responses = op.responses as Record<string, { headers: Record<string, { required?: boolean }> }>;
        expect(responses['429']?.headers['Retry-After']?.required).toBe(true);
        expect(responses['500']).toBeDefined();
      }
    }
  });

  test('POST /orders answers 202 with Location, or with Prefer: wait=N 201 with Preference-Applied', () => {
    const op = document.paths['/orders']!.post!;
    expect(JSON.stringify(op.parameters)).toContain('#/components/parameters/Prefer');
    const responses = op.responses as Record<string, Json>;
    expect(JSON.stringify(responses['202'])).toContain('#/components/schemas/OrderAccepted');
    expect(JSON.stringify(responses['201'])).toContain('#/components/schemas/Order"');
    expect(responses['201']!.headers).toHaveProperty(['Preference-Applied', 'required'], true);
    expect(responses['202']!.headers).toHaveProperty(['Location', 'required'], true);
  });

  test('every 4xx and 5xx of a function is in the error shape {error: {code, message, details}}', () => {
    const errorShaped = (ref: string): boolean => {
      const schema = document.components.schemas[ref.slice(ref.lastIndexOf('/') + 1)] as Json;
      const alternatives = (schema.anyOf as { $ref: string }[] | undefined) ?? [];
      if (alternatives.length > 0) return alternatives.some((a) => errorShaped(a.$ref));
      const error = (schema.properties as Record<string, Json> | undefined)?.error;
      return (
        JSON.stringify((error?.required as string[] | undefined)?.sort()) === '["code","details","message"]'
      );
    };
    for (const op of OPERATIONS) {
      for (const status of Object.keys(op.responses).filter((s) => Number(s) >= 400)) {
        expect({ route: op.route, status, errorShaped: errorShaped(refOf(op.route, status)) }).toEqual({
          route: op.route,
          status,
          errorShaped: true,
        });
      }
    }
  });

  test('every example in the document matches its schema', () => {
    let checked = 0;
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      for (const example of ((schema as Json).examples as unknown[] | undefined) ?? []) {
        expect({ name, errors: schemaErrors({ $ref: `#/components/schemas/${name}` }, example) }).toEqual({
          name,
          errors: undefined,
        });
        checked++;
      }
    }
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const op of Object.values(methods as Record<string, Json>)) {
        const media = [
          ...Object.values(((op.requestBody as Json | undefined)?.content as Record<string, Json>) ?? {}),
          ...Object.values(op.responses as Record<string, Json>).flatMap((r) =>
            Object.values(r.content as Record<string, Json>),
          ),
        ];
        for (const m of media.filter((m) => 'example' in m)) {
          expect({ path, errors: schemaErrors(m.schema as Json, m.example) }).toEqual({
            path,
            errors: undefined,
          });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  // Found by the fuzzer (npm run fuzz): the document promised valid what the validation refuses.
  test.each([
    ['RegisterCustomer', RegisterCustomer, { name: ' ', email: 'ada@example.com' }],
    ['CreateProduct (name)', CreateProduct, { sku: 'W-1', name: '\t \n', priceCents: 1, stock: 0 }],
    ['CreateProduct (sku)', CreateProduct, { sku: '   ', name: 'Widget', priceCents: 1, stock: 0 }],
  ])(
    '%s: a text of white space alone is refused by the document as by the validation',
    (name, schema, body) => {
      const id = name.split(' ')[0]!;
      expect(schema.safeParse(body).success).toBe(false);
      expect(schemaErrors({ $ref: `#/components/schemas/${id}` }, body)).toMatch(/must match pattern/);
      const padded = { ...body, ...('sku' in body ? { sku: ' W-1 ' } : {}), name: ' Ada ' };
      expect({
        validation: schema.safeParse(padded).success,
        document: schemaErrors({ $ref: `#/components/schemas/${id}` }, padded),
      }).toEqual({
        validation: true,
        document: undefined,
      });
    },
  );

  // Found by the fuzzer: zod's email pattern took a domain label ending in a hyphen, which the `email` format refuses.
  const label63 = 'x'.repeat(63);
  test.each([
    ['a domain label ending in a hyphen', 'ada@h-.example.com', false],
    ['a domain label beginning with a hyphen', 'ada@-h.example.com', false],
    ['a domain label of 64 characters', `ada@${label63}x.com`, false],
    ['a domain label of 63 characters', `ada@${label63}.com`, true],
    ['a hyphen inside a label', 'ada@ex-ample.com', true],
    ['two dots in a row', 'ada..l@example.com', false],
  ])('an email with %s: valid %s in the document as in the validation', (_case, email, valid) => {
    const body = { name: 'Ada', email };
    expect({
      validation: RegisterCustomer.safeParse(body).success,
      document: schemaErrors({ $ref: '#/components/schemas/RegisterCustomer' }, body) === undefined,
    }).toEqual({ validation: valid, document: valid });
  });

  test('an email whose part before the @ is longer than 64 characters is refused, as the email format refuses it', () => {
    expect(RegisterCustomer.safeParse({ name: 'Ada', email: `${'a'.repeat(64)}@example.com` }).success).toBe(
      true,
    );
    expect(RegisterCustomer.safeParse({ name: 'Ada', email: `${'a'.repeat(65)}@example.com` }).success).toBe(
      false,
    );
  });

  test('a text is at most its length as sent, before the trim, in the document as in the validation', () => {
    const body = { name: ` ${'a'.repeat(200)}`, email: 'ada@example.com' };
    expect(RegisterCustomer.safeParse(body).success).toBe(false);
    expect(schemaErrors({ $ref: '#/components/schemas/RegisterCustomer' }, body)).toMatch(
      /must NOT have more than 200 characters/,
    );
  });

  test('an empty x-correlation-id is valid, as the API takes it (for none: the request id is used)', () => {
    const parameter = document.components.parameters.CorrelationId as { schema: Json };
    expect(schemaErrors(parameter.schema, '')).toBeUndefined();
  });
});

function refOf(route: string, status: string): string {
  const [method = '', path = ''] = route.split(' ');
  const op = (document.paths as Record<string, Record<string, Json>>)[path]![method.toLowerCase()]!;
  const response = (
    op.responses as Record<string, { content: Record<string, { schema: { $ref: string } }> }>
  )[status]!;
  return response.content['application/json']!.schema.$ref;
}

describe('the response schemas describe what the domain’s views make', () => {
  const at = '2026-01-01T00:00:00.000Z';
  const hex = (prefix: string, digit: string) => `${prefix}_${digit.repeat(32)}`;

  test('a customer', () => {
    const customer = {
      customerId: hex('cus', 'a'),
      name: 'Ada',
      email: 'ada@example.com',
      creditLimitCents: 1000,
      capturedCents: 250,
      status: 'ACTIVE' as const,
      createdAt: at,
    };
    expect(Customer.parse(customerView(customer))).toEqual(customerView(customer));
  });

  test('a product', () => {
    const product = {
      productId: hex('prd', 'b'),
      sku: 'W-1',
      name: 'Widget',
      priceCents: 1250,
      shardCount: 2,
      createdAt: at,
    };
    const view = productView(product, { available: 7, reserved: 2, sold: 1, received: 10 });
    expect(Product.parse(view)).toEqual(view);
  });

  test('an order, pending and cancelled', () => {
    const order: OrderState = {
      orderId: hex('ord', 'c'),
      customerId: hex('cus', 'a'),
      items: [{ productId: hex('prd', 'b'), quantity: 2, priceCents: 1250 }],
      totalCents: 2500,
      status: 'PENDING',
      sagaExecutionArn: 'arn:aws:states:us-east-1:000000000000:execution:Saga:x',
      heldStock: [[{ shard: 0, quantity: 2 }]],
      deadline: at,
      createdAt: at,
      updatedAt: at,
    };
    for (const o of [
      order,
      {
        ...order,
        status: 'CANCELLED' as const,
        cancellationReason: 'PAYMENT_DECLINED' as const,
        paymentId: hex('pay', 'c'),
      },
    ]) {
      expect(Order.parse(orderView(o))).toEqual(orderView(o));
    }
  });

  test('a payment', () => {
    const payment = {
      paymentId: hex('pay', 'c'),
      orderId: hex('ord', 'c'),
      customerId: hex('cus', 'a'),
      amountCents: 2500,
      status: 'REFUNDED' as const,
      createdAt: at,
    };
    expect(Payment.parse(paymentView(payment))).toEqual(paymentView(payment));
  });

  test('a saga trace with a failed step', () => {
    const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const history = [
      {
        id: 1,
        type: 'TaskStateEntered',
        timestamp: t(0),
        stateEnteredEventDetails: { name: 'CapturePayment' },
      },
      { id: 2, type: 'TaskScheduled', timestamp: t(0) },
      {
        id: 3,
        type: 'TaskFailed',
        timestamp: t(1),
        taskFailedEventDetails: { error: 'PaymentDeclined', cause: 'c' },
      },
      { id: 4, type: 'TaskStateExited', timestamp: t(1) },
    ] as HistoryEvent[];
    const trace = { orderId: hex('ord', 'c'), executionArn: 'arn:x', ...sagaTrace('SUCCEEDED', history) };
    expect(SagaTrace.parse(trace)).toEqual(trace);
  });
});

describe('the reference page', () => {
  const page = referencePage(document);

  test('shows every operation, parameter and schema, and escapes what it shows', () => {
    for (const op of OPERATIONS) expect(page).toContain(op.route);
    for (const name of Object.keys(document.components.schemas))
      expect(page).toContain(`id="schema-${name}"`);
    for (const header of [
      'Idempotency-Key',
      'Prefer',
      'x-correlation-id',
      'Retry-After',
      'Preference-Applied',
    ]) {
      expect(page).toContain(header);
    }
    expect(page).not.toMatch(/<script|<link|(src|href)="(https?:)?\/\//);
    const hostile = { ...document, info: { ...document.info, title: '<script>alert(1)</script>' } };
    expect(referencePage(hostile)).not.toContain('<script>');
  });

  test('says for each operation whether it takes a token, and which scopes', () => {
    expect(page).toContain('id="authentication"');
    for (const op of OPERATIONS) {
      const start = page.indexOf(`id="op-${op.operationId}"`);
      const section = page.slice(start, page.indexOf('</section>', start));
      if (op.access === 'public') expect(section).toContain('No token.');
      else for (const scope of op.access) expect(section).toContain(`<code>${scope}</code>`);
    }
  });
});

describe('the check of answers against the document (test/support/contract.ts)', () => {
  const customer = {
    customerId: `cus_${'a'.repeat(32)}`,
    name: 'Ada',
    email: 'ada@example.com',
    creditLimitCents: 1000,
    availableCreditCents: 1000,
    status: 'ACTIVE',
    createdAt: '2026-01-01T00:00:00.000Z',
  };
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    path: '/customers',
    status,
    headers: new Headers({ 'content-type': 'application/json', ...headers }),
    text: JSON.stringify(body),
  });
  const located = { location: `/customers/${customer.customerId}` };

  test('passes an answer the document describes', () => {
    expect(contractViolations(answer(201, customer, located))).toEqual([]);
    const throttled = { error: { code: 'THROTTLED', message: 'later', details: [] } };
    expect(contractViolations(answer(429, throttled, { 'retry-after': '1' }))).toEqual([]);
    expect(contractViolations(answer(429, { message: 'Too Many Requests' }, { 'retry-after': '1' }))).toEqual(
      [],
    );
    const page = { method: 'GET', path: '/docs', status: 200, text: '<!doctype html>' };
    expect(
      contractViolations({ ...page, headers: new Headers({ 'content-type': 'text/html; charset=utf-8' }) }),
    ).toEqual([]);
  });

  test.each([
    ['an undocumented status', answer(418, customer, located), /status 418 is not documented/],
    ['a missing required header', answer(201, customer), /required header Location is missing/],
    [
      'an undocumented field',
      answer(201, { ...customer, extra: 1 }, located),
      /must NOT have additional properties/,
    ],
    [
      'a wrong-typed field',
      answer(201, { ...customer, creditLimitCents: '1000' }, located),
      /must be integer/,
    ],
    ['an error in another shape', answer(400, { message: 'bad' }), /must have required property 'error'/],
    [
      'an unknown error code',
      answer(409, { error: { code: 'NOPE', message: '', details: [] } }),
      /must be equal to constant/,
    ],
    [
      'a header out of its schema',
      answer(429, { message: 'x' }, { 'retry-after': 'soon' }),
      /Retry-After: soon/,
    ],
    ['a body that is not JSON', { ...answer(201, customer, located), text: '<html>' }, /not JSON/],
    [
      'another content type',
      { ...answer(201, customer, located), headers: new Headers({ ...located }) },
      /content-type/,
    ],
    ['a route the document does not have', { ...answer(200, {}), path: '/nowhere' }, /no such operation/],
  ])('fails %s', (_, bad, problem) => {
    expect(contractViolations(bad).join('\n')).toMatch(problem);
  });
});

describe('the OpenAPI document’s identity and access', () => {
  const SHOP_OR_ADMIN = [{ bearerAuth: ['commerce/shop'] }, { bearerAuth: ['commerce/admin'] }];
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, Json>).map(([method, op]) => ({
      route: `${method.toUpperCase()} ${path}`,
      op,
    })),
  );

  test('declares the bearer JWT scheme', () => {
    expect(document.components.securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: expect.any(String) },
    });
  });

  test('each operation lists the scopes its route requires (any one), the documentation none', () => {
    const security = Object.fromEntries(operations.map(({ route, op }) => [route, op.security]));
    expect(security).toEqual({
      'POST /customers': SHOP_OR_ADMIN,
      'GET /customers/{customerId}': SHOP_OR_ADMIN,
      'GET /customers/me': SHOP_OR_ADMIN,
      'POST /products': [{ bearerAuth: ['commerce/admin'] }],
      'GET /products/{productId}': SHOP_OR_ADMIN,
      'POST /products/{productId}/reservations': SHOP_OR_ADMIN,
      'DELETE /products/{productId}/reservations/{reservationId}': SHOP_OR_ADMIN,
      'POST /products/{productId}/restock': [{ bearerAuth: ['commerce/admin'] }],
      'POST /orders': SHOP_OR_ADMIN,
      'GET /orders/{orderId}': SHOP_OR_ADMIN,
      'GET /orders/{orderId}/saga': SHOP_OR_ADMIN,
      'GET /payments/{paymentId}': SHOP_OR_ADMIN,
      'GET /openapi.json': [],
      'GET /docs': [],
    });
  });

  test('every protected operation answers 401 and 403 as API Gateway does; the public ones neither', () => {
    const schemas = document.components.schemas as Record<string, Json>;
    for (const { route, op } of operations) {
      const responses = op.responses as Record<
        string,
        { content: Record<string, { schema: { $ref: string } }> }
      >;
      const isPublic = (op.security as unknown[]).length === 0;
      expect({ route, has401: '401' in responses, has403: '403' in responses }).toEqual({
        route,
        has401: !isPublic,
        has403: !isPublic,
      });
      if (isPublic) continue;
      const ref = (status: string) =>
        responses[status]!.content['application/json']!.schema.$ref.replace('#/components/schemas/', '');
      expect(ref('401')).toBe('Unauthorized');
      expect(['Forbidden', 'RegistrationForbidden']).toContain(ref('403'));
    }
    expect(schemas.Unauthorized).toMatchObject({ properties: { message: { const: 'Unauthorized' } } });
    expect(schemas.Forbidden).toMatchObject({ properties: { message: { const: 'Forbidden' } } });
  });

  test('POST /orders and reservations require Idempotency-Key; the other POSTs accept it', () => {
    const required = operations
      .filter(({ op }) => JSON.stringify(op.parameters).includes('IdempotencyKeyRequired'))
      .map(({ route }) => route);
    expect(required.sort()).toEqual(['POST /orders', 'POST /products/{productId}/reservations']);
    expect(document.components.parameters.IdempotencyKeyRequired).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
      required: true,
    });
  });

  test('the new codes are documented where they are answered', () => {
    const json = JSON.stringify(document);
    for (const code of ['CUSTOMER_EXISTS', 'HOLD_LIMIT_REACHED', 'FORBIDDEN']) expect(json).toContain(code);
    const reservation = document.paths['/products/{productId}/reservations']!.post! as Json;
    expect(JSON.stringify((reservation.responses as Json)['409'])).toContain('ReservationConflict');
    expect(JSON.stringify(document.components.schemas.ReservationConflict)).toContain(
      'HoldLimitReachedError',
    );
    expect(JSON.stringify(document.components.schemas.RegistrationConflict)).toContain('CustomerExistsError');
    expect(JSON.stringify(document.components.schemas.RegistrationForbidden)).toContain('ForbiddenError');
    expect(document.paths['/customers/me']?.get).toBeDefined();
  });
});
