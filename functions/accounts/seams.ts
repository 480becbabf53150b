/** The accounts module's seams with the CDK app (see functions/shared/seams.ts). */
import { environment, text } from '../shared/seams';

export const ACCOUNTS_ROUTES = {
  registerCustomer: 'POST /customers',
  getCustomer: 'GET /customers/{customerId}',
} as const;

/** What a function that reads or writes customers needs: their event table. */
export const accountsEnvironment = environment({ accountsTable: text('ACCOUNTS_TABLE') });
