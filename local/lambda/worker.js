// One function's sandbox: a worker thread whose process.env is the function's
// environment, which loads the bundled handler once and runs the invocations
// the parent sends it, one at a time. The parent sends a second while one runs
// only as a hand-over (see handOver in runtime.ts): the sandbox holds it and
// starts it as soon as the one running has answered, as Lambda's runtime asks
// for the next event right after posting a response; `overlapped` reports an
// invocation that ever started while another ran. Plain CommonJS so that it
// starts without a TypeScript loader.
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
// The functions' shared DynamoDB client takes the meter's transport (see functions/shared/aws.ts; set
// before the bundle loads, which reads it once).
if (meter) globalThis[Symbol.for('local-cloud.dynamodb.client')] = meter.clientConfig;

// The hook of functions/shared/pause.ts: an invocation that only waits (a timer, no work) says so, and the
// parent does not count this sandbox as work meanwhile (Lambda has no such hook: there it is absent).
globalThis[Symbol.for('local-cloud.lambda.pausing')] = (pausing) => {
  if (active === 0) return;
  paused = Boolean(pausing);
  parentPort.postMessage({ pausing: paused });
  // A paused invocation may wait for seconds: what was handed over waits for another sandbox instead
  // (given back after the pause is told, so that the parent does not hand it over here again).
  if (paused) giveBack();
};

/** The invocation handed over while another ran (its message), started when that one answers. */
let nextUp;
/** The running invocation is paused (see the hook above): nothing is handed over to it. */
let paused = false;

function giveBack() {
  if (!nextUp) return;
  parentPort.postMessage({ returned: nextUp.id });
  nextUp = undefined;
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

parentPort.on('message', (message) => {
  const { id, memory, flush, dynamoFaults, takeBack } = message;
  if (takeBack !== undefined) {
    if (nextUp?.id === takeBack) giveBack();
    return;
  }
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
  if (message.handOver && active > 0) {
    if (paused || nextUp) parentPort.postMessage({ returned: id });
    else nextUp = message;
    return;
  }
  void run(message);
});

async function run({ id, event, context, handOver, timeoutMs }) {
  const overlapped = active > 0;
  active++;
  // A handed-over invocation's time counts from its start, not from when it was handed over.
  const deadline = handOver ? Date.now() + timeoutMs : context.deadlineMs;
  const lambdaContext = {
    ...context,
    callbackWaitsForEmptyEventLoop: true,
    deadlineMs: deadline,
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
  paused = false;
  // The next one starts at once, unless this one overran its deadline: the parent then stops this
  // sandbox, and what was handed over is given back to run elsewhere.
  const next = nextUp;
  nextUp = undefined;
  const startsNext = next !== undefined && Date.now() <= deadline;
  parentPort.postMessage({
    ...answer,
    overlapped,
    meter: meter?.take(),
    cpuMs: threadCpuMs(),
    ...(startsNext ? { startedNext: next.id } : {}),
  });
  if (startsNext) void run(next);
  else if (next) parentPort.postMessage({ returned: next.id });
}

/** This thread's CPU time so far, ms (the parent tells a sandbox's start from its invocations with it). */
function threadCpuMs() {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

parentPort.postMessage({ ready: true, cpuMs: threadCpuMs() });
