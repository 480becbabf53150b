/** Pending orders are indexed by deadline (a sparse index of the orders views), spread over partitions. */
export const PENDING_INDEX = 'pendingByDeadline';
export const PENDING_PARTITIONS = 8;

export function pendingPartition(orderId: string): string {
  let hash = 0;
  for (const c of orderId) hash = (hash * 31 + c.charCodeAt(0)) | 0;
  return `p${Math.abs(hash) % PENDING_PARTITIONS}`;
}
