// The project installs its own Node.js 22 (the platform packages in package.json's optionalDependencies put
// `node` in node_modules/.bin, which npm scripts and npx put first on PATH) and everything runs on it, as the
// functions do on Lambda's nodejs22.x, whatever Node the machine has.
test('the tests run on Node.js 22', () => {
  expect(Number(process.versions.node.split('.')[0])).toBe(22);
});
