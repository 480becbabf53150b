// Points a test file at its Jest worker's local cloud (global-setup.ts starts one per worker).
const worker = process.env.JEST_WORKER_ID ?? '1';
for (const name of ['LOCAL_API_URL', 'LOCAL_AWS_ENDPOINT']) {
  const own = process.env[`${name}_${worker}`];
  if (own === undefined)
    throw new Error(`${name}_${worker} is not set: global-setup.ts starts a cloud per worker`);
  process.env[name] = own;
}
