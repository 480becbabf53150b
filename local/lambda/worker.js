// One function's sandbox: a worker thread whose process.env is the function's
// environment, which loads the bundled handler once and runs the invocations
// the parent sends it, one at a time (the parent never sends a second before
// the first has answered; `overlapped` reports it if it ever did). Plain
// CommonJS so that it starts without a TypeScript loader.
const { parentPort, workerData } = require('node:worker_threads');
const { join } = require('node:path');

const { codeDir, handler: handlerSetting, logFile, meter: meterSettings, compileCacheDir } = workerData;

// V8's code for the bundle, kept on disk between sandboxes: a sandbox that starts again (a pool
// grows, an idle one was stopped) skips compiling its bundle, a fifth of its start (measured).
if (compileCacheDir) require('node:module').enableCompileCache(compileCacheDir);

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
// The function's DynamoDB calls go straight to DynamoDB Local; the meter counts them here and the
// counts go to the parent with each invocation's result (writes also wake the stream pollers at once).
let active = 0;
let flushTimer;
const meter = meterSettings
  ? require(meterSettings.file).installDynamoMeter({
      port: meterSettings.port,
      partitionKeys: meterSettings.partitionKeys,
      // The function's role: its DynamoDB calls are checked against it before they leave (IAM enforced locally).
      principal: meterSettings.principal,
      // DynamoDB refusing a share of calls (the local cloud's fault injection); replaced by a message later.
      dynamoFaults: meterSettings.dynamoFaults,
      onWrite: (tables) => parentPort.postMessage({ written: tables }),
      // Calls made after an invocation answered (work it left running) are reported shortly after.
      onRecord: () => {
        if (active > 0 || flushTimer) return;
        flushTimer = setTimeout(() => {
          flushTimer = undefined;
          const batch = meter.take();
          if (batch) parentPort.postMessage({ meter: batch });
        }, 50);
      },
    })
  : undefined;

// The hook of functions/shared/pause.ts: an invocation that only waits (a timer, no work) says so, and the
// parent does not count this sandbox as work meanwhile (Lambda has no such hook: there it is absent).
globalThis[Symbol.for('local-cloud.lambda.pausing')] = (pausing) => {
  if (active > 0) parentPort.postMessage({ pausing: Boolean(pausing) });
};

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

parentPort.on('message', async ({ id, event, context, memory, flush, dynamoFaults }) => {
  if (dynamoFaults) {
    meter?.setDynamoFaults(dynamoFaults);
    return;
  }
  if (memory) {
    const { heapUsed, heapTotal, external } = process.memoryUsage();
    parentPort.postMessage({ id, result: JSON.stringify({ heapUsed, heapTotal, external }) });
    return;
  }
  if (flush) {
    // The sandbox is being stopped (its invocation timed out): hand over what was counted so far.
    parentPort.postMessage({ id, result: null, meter: meter?.take() });
    return;
  }
  const overlapped = active > 0;
  active++;
  const deadline = context.deadlineMs;
  const lambdaContext = {
    ...context,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
  let answer;
  try {
    const result = await handler(event, lambdaContext);
    answer = { id, result: result === undefined ? null : JSON.stringify(result) };
  } catch (error) {
    answer = { id, error: errorPayload(error) };
  }
  active--;
  parentPort.postMessage({ ...answer, overlapped, meter: meter?.take(), cpuMs: threadCpuMs() });
});

/** This thread's CPU time so far, ms (the parent tells a sandbox's start from its invocations with it). */
function threadCpuMs() {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

parentPort.postMessage({ ready: true, cpuMs: threadCpuMs() });
