import { delimiter, dirname } from 'node:path';
import { withThisNode } from '../../this-node';

// The project installs its own Node.js 22 (the platform packages in package.json's optionalDependencies put
// `node` in node_modules/.bin, which npm scripts and npx put first on PATH) and everything runs on it, as the
// functions do on Lambda's nodejs22.x, whatever Node the machine has.
test('the tests run on Node.js 22', () => {
  expect(Number(process.versions.node.split('.')[0])).toBe(22);
});

test("a child's environment finds this process's Node first on PATH, and keeps the rest", () => {
  const env = withThisNode({ PATH: ['/elsewhere/bin', '/usr/bin'].join(delimiter), KEEP: 'me' });
  expect(env.PATH!.split(delimiter)).toEqual([dirname(process.execPath), '/elsewhere/bin', '/usr/bin']);
  expect(env.KEEP).toBe('me');
  expect(withThisNode({}).PATH).toBe(dirname(process.execPath));
});
