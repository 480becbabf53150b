// One function's sandbox: a worker thread whose process.env is the function's
// environment, which loads the bundled handler once and runs the invocations
// the parent sends it, one at a time. The parent sends a second while one runs
// only as a hand-over (see handOver in hand-over.ts): the sandbox holds it and
// starts it as soon as the one running has answered, as Lambda's runtime asks
// for the next event right after posting a response; `overlapped` reports an
// invocation that ever started while another ran. Plain CommonJS so that it
// starts without a TypeScript loader.
const { parentPort, workerData } = require('node:worker_threads');
const { join } = require('node:path');
const { existsSync } = require('node:fs');
const { pathToFileURL } = require('node:url');

const { codeDir, handler: handlerSetting, logFile, compileCacheDir } = workerData;

// V8's code for the bundle, kept on disk between sandboxes: a sandbox that starts again (a pool
// grows, an idle one was stopped) skips compiling its bundle, a fifth of its start (measured).
if (compileCacheDir) require('node:module').enableCompileCache(compileCacheDir);

/** The request id of the invocation running in this sandbox (its `awsRequestId`), while one runs. */
let currentRequestId;

/**
 * A JSON line the function writes during an invocation, with that invocation's `requestId` as its
 * last key (unless it has one of its own). Lambda keeps each sandbox's lines in a log stream of
 * their own, between the invocation's START and END; here every sandbox of a function appends to one
 * file, so the line says which invocation wrote it (the saga console and the log reader find an
 * invocation's lines by it). Powertools writes one line per call; anything else is left as it is.
 */
function stamped(chunk) {
  if (currentRequestId === undefined || chunk.charCodeAt(0) !== 123 || !chunk.endsWith('}\n')) return chunk;
  // A line that has a requestId of its own keeps it (one nested deeper, an AWS SDK error's, does not count).
  if (chunk.includes('"requestId"')) {
    try {
      if (Object.hasOwn(JSON.parse(chunk), 'requestId')) return chunk;
    } catch {
      return chunk;
    }
  }
  const body = chunk.slice(0, -2).trimEnd();
  const key = `"requestId":"${currentRequestId}"}\n`;
  return body === '{' ? `{${key}` : `${body},${key}`;
}

// The function's output goes straight to its log file from this thread: piped through the
// parent, every log line of every function would cost the local cloud's main thread.
if (logFile) {
  const { openSync, writeSync } = require('node:fs');
  const fd = openSync(logFile, 'a');
  for (const stream of [process.stdout, process.stderr]) {
    stream.write = (chunk, encoding, callback) => {
      writeSync(fd, typeof chunk === 'string' ? stamped(chunk) : Buffer.from(chunk));
      const done = typeof encoding === 'function' ? encoding : callback;
      if (done) done();
      return true;
    };
  }
}
let active = 0;

// An invocation that waits on a timer of its own (a `POST /orders` with `Prefer: wait=N` polling for the
// saga's end, a retry's back-off) does no work meanwhile: told of it, the parent does not count this
// sandbox as work (see local/lambda/pauses.ts), so that other invocations are not queued behind one that
// only waits. Seen from here, as Lambda's own runtime could see it, with nothing asked of the function:
// the promise timers it awaits (node:timers/promises, read by the bundle at each call) are wrapped.
const timers = require('node:timers/promises');
const sleep = timers.setTimeout;
/** Waits shorter than this are not pauses: a sandbox lends its room only for waits that last. */
const PAUSE_MIN_MS = 20;
let waiting = 0;
timers.setTimeout = function pausingSetTimeout(ms, ...rest) {
  if (active === 0 || !(Number(ms) >= PAUSE_MIN_MS)) return sleep(ms, ...rest);
  if (waiting++ === 0) setPausing(true);
  return sleep(ms, ...rest).finally(() => {
    if (--waiting === 0) setPausing(false);
  });
};

function setPausing(pausing) {
  if (active === 0) return;
  paused = pausing;
  parentPort.postMessage({ pausing });
  // A paused invocation may wait for seconds: what was handed over waits for another sandbox instead
  // (given back after the pause is told, so that the parent does not hand it over here again).
  if (paused) giveBack();
}

/** The invocation handed over while another ran (its message), started when that one answers. */
let nextUp;
/** The running invocation is paused (see the hook above): nothing is handed over to it. */
let paused = false;

function giveBack() {
  if (!nextUp) return;
  parentPort.postMessage({ returned: nextUp.id });
  nextUp = undefined;
}

/** The handler, once its module is loaded (see the end of this file). */
let handler;

/**
 * The handler's module and function, as Lambda's Node.js runtime finds them: `index.handler` is the
 * export `handler` of index.js, index.mjs or index.cjs, the first that exists; an ES module is
 * imported, CommonJS required (import() of a .js file takes the nearest package.json's type, as Lambda's does).
 */
async function loadHandler() {
  const dot = handlerSetting.lastIndexOf('.');
  const base = join(codeDir, handlerSetting.slice(0, dot));
  const file = ['.js', '.mjs', '.cjs'].map((ext) => base + ext).find((f) => existsSync(f));
  if (file === undefined) throw new Error(`${handlerSetting}: no ${base}.js, .mjs or .cjs`);
  const handlerModule = file.endsWith('.mjs') ? await import(pathToFileURL(file).href) : require(file);
  const found = handlerModule[handlerSetting.slice(dot + 1)];
  if (typeof found !== 'function') {
    throw new Error(`${handlerSetting} is not a function in ${codeDir}`);
  }
  return found;
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
  const { id, memory, flush, takeBack } = message;
  if (takeBack !== undefined) {
    if (nextUp?.id === takeBack) giveBack();
    return;
  }
  if (memory) {
    const { heapUsed, heapTotal, external } = process.memoryUsage();
    parentPort.postMessage({ id, result: JSON.stringify({ heapUsed, heapTotal, external }) });
    return;
  }
  if (flush) {
    // The sandbox is being stopped (its invocation timed out): this answer follows whatever it answered before.
    parentPort.postMessage({ id, result: null });
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
  currentRequestId = context.awsRequestId;
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
  // What the function writes after answering (a promise it did not await) carries no request id.
  if (active === 0) currentRequestId = undefined;
  paused = false;
  waiting = 0;
  // The next one starts at once, unless this one overran its deadline: the parent then stops this
  // sandbox, and what was handed over is given back to run elsewhere.
  const next = nextUp;
  nextUp = undefined;
  const startsNext = next !== undefined && Date.now() <= deadline;
  parentPort.postMessage({
    ...answer,
    overlapped,
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

// Ready once the handler is loaded; a module that throws fails the sandbox's start with its error,
// as a require that threw did (the worker's 'error' event).
loadHandler().then(
  (found) => {
    handler = found;
    parentPort.postMessage({ ready: true, cpuMs: threadCpuMs() });
  },
  (error) => {
    process.nextTick(() => {
      throw error;
    });
  },
);
