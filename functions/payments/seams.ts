/** The payments module's seams with the CDK app (see functions/shared/seams.ts). */
import { environment, text } from '../shared/seams';

export const PAYMENTS_ROUTES = {
  getPayment: 'GET /payments/{paymentId}',
} as const;

/** What a function that reads or writes payments needs: their event table. */
export const paymentsEnvironment = environment({ paymentsTable: text('PAYMENTS_TABLE') });
