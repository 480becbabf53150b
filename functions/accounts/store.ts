import { documents, fromEnvironment } from '../shared/aws';
import { AggregateStore } from '../shared/event-store';
import { customerFold } from './domain';
import { accountsEnvironment } from './seams';

export const customers = () =>
  new AggregateStore(documents, fromEnvironment(accountsEnvironment).accountsTable, 'Customer', customerFold);
