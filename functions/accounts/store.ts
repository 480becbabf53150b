import { documents, env } from '../shared/aws';
import { AggregateStore } from '../shared/event-store';
import { customerFold } from './domain';

export const customers = () => new AggregateStore(documents, env('ACCOUNTS_TABLE'), 'Customer', customerFold);
