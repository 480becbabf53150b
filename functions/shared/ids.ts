import { randomUUID } from 'node:crypto';

/** Opaque server-made ids with a readable prefix: `cus_…`, `prd_…`, `res_…`, `ord_…`, `pay_…`. */
export const newId = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

/** Whether `id` could have been made by `newId(prefix)`; anything else is an unknown id. */
export const isId = (prefix: string, id: string | undefined): id is string =>
  id !== undefined && new RegExp(`^${prefix}_[0-9a-f]{32}$`).test(id);

/** One of `partitions` index partitions (`p0`…), by a stable hash of `id`: spreads a sparse index's writes. */
export function partitionOf(id: string, partitions: number): string {
  let hash = 0;
  for (const c of id) hash = (hash * 31 + c.charCodeAt(0)) | 0;
  return `p${Math.abs(hash) % partitions}`;
}
