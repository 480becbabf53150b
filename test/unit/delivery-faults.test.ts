import { PoisonRecords, targetFails, validateDeliveryFaults } from '@commerce/local-cloud';

describe('delivery faults: poison records and failing targets', () => {
  test('settings: whole numbers and rates, off when left out', () => {
    expect(validateDeliveryFaults({})).toEqual({ poisonRecords: 0, failingTargets: 0 });
    expect(validateDeliveryFaults({ poisonRecords: 1, poisonFunction: 'InventoryProjector' })).toEqual({
      poisonRecords: 1,
      poisonFunction: 'InventoryProjector',
      failingTargets: 0,
    });
    expect(() => validateDeliveryFaults({ poisonRecords: 1.5 })).toThrow(/poisonRecords/);
    expect(() => validateDeliveryFaults({ failingTargets: 2 })).toThrow(/failingTargets/);
    expect(() => validateDeliveryFaults({ nope: 1 })).toThrow(/unknown field nope/);
  });

  test('a poison record is chosen within the budget, failed on every time, and forgotten when lifted', () => {
    const faults = validateDeliveryFaults({ poisonRecords: 1, poisonFunction: 'Projector' });
    const poison = new PoisonRecords(faults);
    expect(poison.poisonIn('OutboxPublisher', 's', ['1', '2'])).toBeUndefined();
    expect(poison.poisonIn('ProjectorFn', 's', ['3', '4'])).toBe('3');
    // Every delivery that holds it fails on it; no other record is poisoned (the budget is spent).
    expect(poison.poisonIn('ProjectorFn', 's', ['2', '3'])).toBe('3');
    expect(poison.poisonIn('ProjectorFn', 's', ['4', '5'])).toBeUndefined();
    expect(poison.poisoned('s', ['3'])).toBe('3');
    expect(poison.ever).toBe(1);
    poison.clear();
    expect(poison.poisoned('s', ['3'])).toBeUndefined();
  });

  test('a target fails at its rate, only for the rule named', () => {
    const faults = validateDeliveryFaults({ failingTargets: 1, failingRule: 'SagaStart' });
    expect(targetFails(faults, 'SagaStartOnOrderPlaced', () => 0.99)).toBe(true);
    expect(targetFails(faults, 'InventoryExpirySweep', () => 0)).toBe(false);
    expect(targetFails(validateDeliveryFaults({}), 'SagaStart', () => 0)).toBe(false);
  });
});
