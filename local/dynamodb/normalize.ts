import { validation } from './errors';
import { type AttributeValue, type Item, normalizeNumber, validateValue } from './values';

/** A plain integer DynamoDB would print the same way: most numbers the platform writes (versions, cents). */
const CANONICAL_INTEGER = /^-?[1-9]\d{0,37}$|^0$/;

/**
 * An item from a request, checked as DynamoDB checks one (each value
 * well-formed, numbers within 38 digits and range) and with its numbers in
 * the form DynamoDB returns them (`1.50` is stored and read back as `1.5`).
 */
export function normalizeItem(item: unknown, where: string): Item {
  // `where` names the parameter in the one error DynamoDB words with it: a parameter that is not a map.
  if (!item || typeof item !== 'object' || Array.isArray(item)) {
    throw validation(`One or more parameter values were invalid: ${where} must be a map of attribute values`);
  }
  const out: Item = {};
  for (const name in item as Item) {
    if (name.length === 0) {
      throw validation(
        'One or more parameter values were invalid: An AttributeValue may not contain an empty attribute name',
      );
    }
    const value = (item as Item)[name]!;
    // '' words the error as DynamoDB does for an item's own attribute (a placeholder is named instead).
    validateValue(value, '');
    out[name] = normalizeValue(value);
  }
  return out;
}

export function normalizeValue(value: AttributeValue): AttributeValue {
  if (value.N !== undefined) {
    const n = value.N as string;
    return CANONICAL_INTEGER.test(n) ? value : { N: normalizeNumber(n) };
  }
  if (value.NS !== undefined) return { NS: (value.NS as string[]).map(normalizeNumber) };
  if (value.L !== undefined) return { L: (value.L as AttributeValue[]).map(normalizeValue) };
  if (value.M !== undefined) {
    const map: Item = {};
    for (const k in value.M as Item) map[k] = normalizeValue((value.M as Item)[k]!);
    return { M: map };
  }
  return value;
}
