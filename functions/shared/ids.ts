import { randomUUID } from 'node:crypto';

/** Opaque server-made ids with a readable prefix: `cus_…`, `prd_…`, `res_…`, `ord_…`, `pay_…`. */
export const newId = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

/** Whether `id` could have been made by `newId(prefix)`; anything else is an unknown id. */
export const isId = (prefix: string, id: string | undefined): id is string =>
  id !== undefined && new RegExp(`^${prefix}_[0-9a-f]{32}$`).test(id);
