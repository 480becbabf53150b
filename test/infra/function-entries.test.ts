import { App, Stack } from 'aws-cdk-lib';
import { bundledCode, handlerEntries } from '../../lib/constructs/bundles';
import { ServiceFunction } from '../../lib/constructs/service-function';
import { removeSynthesized, synthStage, UNVALIDATED } from './synth';

/**
 * A function's entry is a file of functions/<module>/handlers/: the bundler
 * builds those files, all in one esbuild run (lib/constructs/bundles.ts).
 */
afterAll(removeSynthesized);

test('each function has a file of a handlers/ directory for entry, and each such file is one function', () => {
  const entries = synthStage('dev')
    .stack.node.findAll()
    .filter((c): c is ServiceFunction => c instanceof ServiceFunction)
    .map((f) => f.entry);
  expect(entries.sort()).toEqual([...handlerEntries()]);
});

test('an entry outside a handlers/ directory is refused, naming where entries go', () => {
  const stack = new Stack(new App(UNVALIDATED), 'Entries');
  expect(() => bundledCode(stack, 'saga/application.ts', { debug: false, sourceMaps: false })).toThrow(
    "saga/application.ts is not a function's entry: entries are the files of functions/<module>/handlers/",
  );
});
