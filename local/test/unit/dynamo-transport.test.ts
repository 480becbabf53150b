import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dynamoTransport, type LocalAnswer, type MeteredCall } from '../../lambda/dynamo-transport';

/** A stand-in for DynamoDB Local: answers each request with `answer`, and counts connections and requests. */
async function server(answer: (req: IncomingMessage, body: string, res: ServerResponse) => void) {
  const seen = { connections: 0, requests: [] as { headers: IncomingMessage['headers']; body: string }[] };
  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.requests.push({ headers: req.headers, body });
      answer(req, body, res);
    });
  });
  http.on('connection', () => seen.connections++);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return { port, seen, http, close: () => new Promise((resolve) => http.close(resolve)) };
}

const request = (port: number, target: string, body: string) => ({
  protocol: 'http:',
  hostname: '127.0.0.1',
  port,
  method: 'POST',
  path: '/',
  headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
  body,
});

const text = (body: Uint8Array) => Buffer.from(body).toString('utf8');

/** A transport whose meter lets every call through unchanged. */
const unmetered = (port: number) => dynamoTransport({ port, call: () => undefined });

let stand: Awaited<ReturnType<typeof server>> | undefined;
afterEach(async () => {
  stand?.http.closeAllConnections();
  await stand?.close();
  stand = undefined;
});

test('a call goes as one HTTP/1.1 request and its answer comes back whole; calls in turn share one connection', async () => {
  stand = await server((_req, body, res) => {
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    res.setHeader('X-Amzn-RequestId', 'r-1');
    res.end(JSON.stringify({ echoed: JSON.parse(body) }));
  });
  const { requestHandler } = unmetered(stand.port);
  for (let i = 0; i < 3; i++) {
    const { response } = await requestHandler.handle(
      request(stand.port, 'DynamoDB_20120810.GetItem', JSON.stringify({ n: i, text: 'é' })),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-amzn-requestid']).toBe('r-1');
    expect(JSON.parse(text(response.body))).toEqual({ echoed: { n: i, text: 'é' } });
  }
  expect(stand.seen.connections).toBe(1);
  expect(stand.seen.requests[0]!.headers).toMatchObject({
    'x-amz-target': 'DynamoDB_20120810.GetItem',
    host: `127.0.0.1:${stand.port}`,
    'content-length': String(Buffer.byteLength(JSON.stringify({ n: 0, text: 'é' }))),
  });
  requestHandler.destroy();
});

test('calls in flight together each take a connection; a chunked answer is read whole', async () => {
  stand = await server((_req, body, res) => {
    // No content-length: node sends the answer in chunks.
    res.write('{"part":1,');
    setTimeout(() => res.end(`"body":${body}}`), 5);
  });
  const { requestHandler } = unmetered(stand.port);
  const answers = await Promise.all(
    [1, 2, 3].map((n) =>
      requestHandler.handle(request(stand!.port, 'DynamoDB_20120810.Query', `{"n":${n}}`)),
    ),
  );
  expect(answers.map(({ response }) => JSON.parse(text(response.body)))).toEqual(
    [1, 2, 3].map((n) => ({ part: 1, body: { n } })),
  );
  expect(stand.seen.connections).toBe(3);
  requestHandler.destroy();
});

test('a connection closed before its answer fails the call as Node does (ECONNRESET, which the SDK retries); the next call opens another', async () => {
  let first = true;
  stand = await server((req, _body, res) => {
    if (first) {
      first = false;
      req.socket.destroy();
      return;
    }
    res.end('{}');
  });
  const { requestHandler } = unmetered(stand.port);
  await expect(
    requestHandler.handle(request(stand.port, 'DynamoDB_20120810.PutItem', '{}')),
  ).rejects.toMatchObject({
    code: 'ECONNRESET',
  });
  const { response } = await requestHandler.handle(request(stand.port, 'DynamoDB_20120810.PutItem', '{}'));
  expect(response.statusCode).toBe(200);
  expect(stand.seen.connections).toBe(2);
  requestHandler.destroy();
});

test('a kept connection the server closed while idle is not used again', async () => {
  stand = await server((_req, _body, res) => res.end('{}'));
  const { requestHandler } = unmetered(stand.port);
  await requestHandler.handle(request(stand.port, 'DynamoDB_20120810.GetItem', '{}'));
  stand.http.closeIdleConnections();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const { response } = await requestHandler.handle(request(stand.port, 'DynamoDB_20120810.GetItem', '{}'));
  expect(response.statusCode).toBe(200);
  expect(stand.seen.connections).toBe(2);
  requestHandler.destroy();
});

test("the meter sees each call to its port: its refusal is answered here, its body is what is sent, and a 200 is counted with the answer's text", async () => {
  stand = await server((_req, body, res) => {
    res.statusCode = body.includes('"fail"') ? 400 : 200;
    res.end(JSON.stringify({ got: JSON.parse(body) }));
  });
  const counted: { target: string | undefined; answer: string }[] = [];
  const refusal: LocalAnswer = {
    status: 400,
    body: { __type: 'x#AccessDeniedException' },
    requestIdPrefix: 'local-iam',
  };
  const call = (target: string | undefined, body: Buffer): MeteredCall => ({
    refusal: () => (body.toString().includes('"deny"') ? refusal : undefined),
    outgoing: () => Buffer.from(body.toString().replace('{', '{"ReturnConsumedCapacity":"TOTAL",')),
    succeeded: (answer) => counted.push({ target, answer: answer() }),
  });
  const { requestHandler } = dynamoTransport({ port: stand.port, call });

  const denied = await requestHandler.handle(request(stand.port, 'DynamoDB_20120810.PutItem', '{"deny":1}'));
  expect(denied.response.statusCode).toBe(400);
  expect(JSON.parse(text(denied.response.body))).toEqual(refusal.body);
  expect(denied.response.headers['x-amzn-requestid']).toMatch(/^local-iam-/);
  expect(stand.seen.requests).toHaveLength(0);

  const read = await requestHandler.handle(request(stand.port, 'DynamoDB_20120810.GetItem', '{"a":1}'));
  expect(JSON.parse(text(read.response.body))).toEqual({ got: { ReturnConsumedCapacity: 'TOTAL', a: 1 } });
  await requestHandler.handle(request(stand.port, 'DynamoDB_20120810.GetItem', '{"fail":1}'));
  expect(counted).toEqual([{ target: 'DynamoDB_20120810.GetItem', answer: text(read.response.body) }]);
  requestHandler.destroy();
});

test('the signer names the access key only (DynamoDB Local checks no signature)', async () => {
  const { signer } = unmetered(1);
  const before = process.env.AWS_ACCESS_KEY_ID;
  process.env.AWS_ACCESS_KEY_ID = 'OrdersApiFunction';
  try {
    const signed = await signer.sign(request(1, 'DynamoDB_20120810.GetItem', '{}'));
    expect(signed.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=OrdersApiFunction\//);
  } finally {
    if (before === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    else process.env.AWS_ACCESS_KEY_ID = before;
  }
});

test('an aborted call fails with AbortError, before it leaves or while it waits', async () => {
  stand = await server(() => undefined);
  const { requestHandler } = unmetered(stand.port);
  const aborted = new AbortController();
  aborted.abort();
  await expect(
    requestHandler.handle(request(stand.port, 'DynamoDB_20120810.GetItem', '{}'), {
      abortSignal: aborted.signal,
    }),
  ).rejects.toMatchObject({ name: 'AbortError' });
  const waiting = new AbortController();
  const call = requestHandler.handle(request(stand.port, 'DynamoDB_20120810.GetItem', '{}'), {
    abortSignal: waiting.signal,
  });
  setTimeout(() => waiting.abort(), 20);
  await expect(call).rejects.toMatchObject({ name: 'AbortError' });
  requestHandler.destroy();
});
