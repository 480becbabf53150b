// One function's sandbox: a worker thread whose process.env is the function's
// environment, which loads the bundled handler once and runs invocations sent
// by the parent. Plain CommonJS so that it starts without a TypeScript loader.
const { parentPort, workerData } = require('node:worker_threads');
const { join } = require('node:path');

const { codeDir, handler: handlerSetting, logFile } = workerData;

// The function's output goes straight to its log file from this thread: piped through the
// parent, every log line of every function would cost the local cloud's main thread.
if (logFile) {
  const { openSync, writeSync } = require('node:fs');
  const fd = openSync(logFile, 'a');
  for (const stream of [process.stdout, process.stderr]) {
    stream.write = (chunk, encoding, callback) => {
      writeSync(fd, typeof chunk === 'string' ? chunk : Buffer.from(chunk));
      const done = typeof encoding === 'function' ? encoding : callback;
      if (done) done();
      return true;
    };
  }
}
const dot = handlerSetting.lastIndexOf('.');
const handlerModule = require(join(codeDir, handlerSetting.slice(0, dot)));
const handler = handlerModule[handlerSetting.slice(dot + 1)];
if (typeof handler !== 'function') {
  throw new Error(`${handlerSetting} is not a function in ${codeDir}`);
}

function errorPayload(error) {
  if (error instanceof Error) {
    return {
      errorType: error.name,
      errorMessage: error.message,
      trace: String(error.stack ?? '').split('\n'),
    };
  }
  return { errorType: 'Error', errorMessage: String(error), trace: [] };
}

parentPort.on('message', async ({ id, event, context, memory }) => {
  if (memory) {
    const { heapUsed, heapTotal, external } = process.memoryUsage();
    parentPort.postMessage({ id, result: JSON.stringify({ heapUsed, heapTotal, external }) });
    return;
  }
  const deadline = context.deadlineMs;
  const lambdaContext = {
    ...context,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
  try {
    const result = await handler(event, lambdaContext);
    parentPort.postMessage({ id, result: result === undefined ? null : JSON.stringify(result) });
  } catch (error) {
    parentPort.postMessage({ id, error: errorPayload(error) });
  }
});

parentPort.postMessage({ ready: true });
