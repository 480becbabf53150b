import { ACCOUNTS_ROUTES } from '../../functions/accounts/seams';
import { DOCS_ROUTES } from '../../functions/docs/seams';
import { INVENTORY_ROUTES } from '../../functions/inventory/seams';
import { ORDERS_ROUTES, orderPlacementEnvironment } from '../../functions/orders/seams';
import { PAYMENTS_ROUTES } from '../../functions/payments/seams';
import { environment, numeric, text } from '../../functions/shared/seams';

/** The typed environment a construct writes and a function reads (functions/shared/seams.ts). */
const settings = environment({ table: text('SOME_TABLE'), ttlSeconds: numeric('SOME_TTL_SECONDS') });

test('what the construct writes, the function reads back, typed, under the same names', () => {
  const written = settings.write({ table: 'Orders-1A2B', ttlSeconds: 900 });
  expect(written).toEqual({ SOME_TABLE: 'Orders-1A2B', SOME_TTL_SECONDS: '900' });
  expect(settings.read(written)).toEqual({ table: 'Orders-1A2B', ttlSeconds: 900 });
});

test('a variable missing or empty fails the read, by its name', () => {
  expect(() => settings.read({ SOME_TTL_SECONDS: '900' })).toThrow(
    'environment variable SOME_TABLE is not set',
  );
  expect(() => settings.read({ SOME_TABLE: '', SOME_TTL_SECONDS: '900' })).toThrow(
    'environment variable SOME_TABLE is not set',
  );
});

test('a numeric variable that holds no number fails the read instead of reading NaN', () => {
  for (const bad of ['ninety', ' ', '12s', 'Infinity']) {
    expect(() => settings.read({ SOME_TABLE: 't', SOME_TTL_SECONDS: bad })).toThrow(
      'environment variable SOME_TTL_SECONDS is not a number',
    );
  }
  expect(settings.read({ SOME_TABLE: 't', SOME_TTL_SECONDS: '0.5' }).ttlSeconds).toBe(0.5);
});

test('variables the function does not read are left alone', () => {
  expect(orderPlacementEnvironment.read({ SAGA_DEADLINE_SECONDS: '30', OTHER: 'x' })).toEqual({
    sagaDeadlineSeconds: 30,
  });
});

test('route keys are `METHOD /path`, each in one module only', () => {
  const keys = [ACCOUNTS_ROUTES, DOCS_ROUTES, INVENTORY_ROUTES, ORDERS_ROUTES, PAYMENTS_ROUTES].flatMap(
    Object.values,
  );
  for (const key of keys) expect(key).toMatch(/^(GET|POST|PUT|PATCH|DELETE) \/\S*$/);
  expect(new Set(keys).size).toBe(keys.length);
});
