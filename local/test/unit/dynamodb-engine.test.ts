import { DynamoDbEngine } from '../../dynamodb/engine';
import { DynamoDbError } from '../../dynamodb/errors';

// An operation is one of the engine's own: a name every object has (`toString`, `constructor`) is unknown,
// as any other name DynamoDB does not serve (DynamoDB answers UnknownOperationException).
test.each(['toString', 'constructor', '__proto__', 'hasOwnProperty', 'ExecuteStatement'])(
  '%s is an unknown operation',
  (operation) => {
    const error = (() => {
      try {
        new DynamoDbEngine().handle(operation, {});
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DynamoDbError);
    expect((error as DynamoDbError).type).toBe('UnknownOperationException');
  },
);
