import fc from 'fast-check';

/** One raw request of the protocol-level fuzz tests, with what a reader of the answer must know. */
export interface MalformedRequest {
  bytes: Buffer;
  /** Sent as HEAD (exactly): the answer must have no body. */
  head: boolean;
}

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');

/** Bytes that stay inside one line (a bare CR or LF would make another request, not a malformed one). */
const inLineBytes = (maxLength: number) =>
  fc.uint8Array({ minLength: 1, maxLength }).map((bytes) => latin1(bytes).replace(/[\r\n]/g, '\0'));

/** Puts `insert` at a random place of `text` (after the first character, so a path keeps its `/`). */
const insertAnywhere = (text: fc.Arbitrary<string>, insert: fc.Arbitrary<string>) =>
  fc.tuple(text, insert, fc.nat()).map(([value, extra, at]) => {
    const position = 1 + (at % Math.max(1, value.length));
    return value.slice(0, position) + extra + value.slice(position);
  });

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'PATCH', 'DELETE') },
  { weight: 2, arbitrary: fc.constantFrom('OPTIONS', 'PROPFIND', 'FOO', 'get', 'head', '', 'G\0T', 'TRACE') },
  { weight: 1, arbitrary: inLineBytes(8) },
);

function target(paths: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: paths },
    {
      weight: 1,
      arbitrary: insertAnywhere(
        paths,
        fc.constantFrom('\0', '%00', '%ZZ', '%', '%G0', '%C3%28', '%ED%A0%80', '\x01', '\x7f', '\xff', ' ', '#', '//', '/../'),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(paths, fc.integer({ min: 90, max: 3000 }), fc.constantFrom('a', '%41', '0'))
        .map(([path, length, unit]) => `${path}/${unit.repeat(length)}`),
    },
    { weight: 1, arbitrary: insertAnywhere(paths, inLineBytes(12)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(paths, fc.string({ maxLength: 20 }), fc.constantFrom('%00', '\0', '%ZZ', ''))
        .map(([path, query, bad]) => `${path}?${encodeURIComponent(query)}${bad}`),
    },
  );
}

const version = fc.oneof(
  { weight: 8, arbitrary: fc.constant('HTTP/1.1') },
  { weight: 1, arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.x', 'http/1.1', '', 'HTTP/1.1\0') },
);

const headerLine = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom('X-Fuzz', 'Accept', 'Cookie', 'Idempotency-Key', 'Origin', 'Connection', 'Expect'),
        fc.string({ maxLength: 40 }),
      )
      .map(([name, value]) => `${name}: ${value}`),
  },
  { weight: 1, arbitrary: fc.tuple(inLineBytes(10), inLineBytes(20)).map(([name, value]) => `${name}: ${value}`) },
  { weight: 1, arbitrary: inLineBytes(30).map((value) => `X-Fuzz: ${value}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'X-Fuzz: a\0b',
      'X-\0: b',
      'X Fuzz: b',
      ': empty',
      'NoColon',
      ' folded',
      'Expect: 100-continue',
      'Expect: nothing',
      'Connection: close',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 15 * 1024, max: 20 * 1024 }).map((length) => `X-Big: ${'b'.repeat(length)}`) },
);

const bodyText = fc.oneof(
  fc.json({ maxDepth: 2 }),
  fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value).replace(/"(?=[^"]*"$)/, '\\u0000"')),
  fc.constantFrom('{"email":"a\\u0000@b.test","password":"x\\u0000yzzzzzz"}', '{"name":"\0"}', '{\0}', '\0', '{"envelopes":["\\u0000"]}'),
  inLineBytes(60),
);

const contentType = fc.constantFrom(
  'Content-Type: application/json\r\n',
  'Content-Type: text/plain\r\n',
  'Content-Type: application/json\0\r\n',
  '',
);

/** Framing headers and the bytes after the header section. */
const framing: fc.Arbitrary<{ headers: string; body: string }> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ headers: '', body: '' }) },
  { weight: 3, arbitrary: bodyText.map((body) => ({ headers: `Content-Length: ${Buffer.byteLength(body, 'latin1')}\r\n`, body })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('abc', '-1', '1e3', '0x2', '+2', ' 2', '2 2', '99999999999999999999', '', '\0', '2\0', '1.5'), bodyText)
      // At least 3 bytes: a length that parses after all (' 2') then finds its body complete.
      .map(([length, body]) => ({ headers: `Content-Length: ${length}\r\n`, body: body.padEnd(3, ' ') })),
  },
  {
    weight: 1,
    arbitrary: bodyText.map((body) => ({ headers: `Content-Length: ${body.length}\r\nContent-Length: ${body.length + 1}\r\n`, body })),
  },
  {
    weight: 1,
    arbitrary: bodyText.map((body) => ({
      headers: `Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n`,
      body: `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    })),
  },
  {
    weight: 1,
    arbitrary: bodyText.map((body) => ({
      headers: 'Transfer-Encoding: chunked\r\n',
      body: `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(bodyText, fc.constantFrom('zz', '-1', '\0', '2;ext=1', 'ffffffffffffffffff', '')).map(([body, size]) => ({
      headers: 'Transfer-Encoding: chunked\r\n',
      body: `${size}\r\n${body}\r\n0\r\n\r\n`,
    })),
  },
  {
    weight: 1,
    arbitrary: bodyText.map((body) => ({
      headers: 'Transfer-Encoding: chunked\r\n',
      body: `${body.length.toString(16)}\r\n${body}0\r\n\r\n`,
    })),
  },
  {
    weight: 1,
    arbitrary: bodyText.map((body) => ({
      headers: 'Transfer-Encoding: chunked\r\n',
      body: `${body.length.toString(16)}\r\n${body}\r\n0\r\nX-\0: t\r\n\r\n`,
    })),
  },
  { weight: 1, arbitrary: bodyText.map((body) => ({ headers: 'Transfer-Encoding: gzip\r\n', body })) },
);

/**
 * Requests broken at the protocol level: random bytes and NUL bytes in the request line and
 * headers, bad Content-Length, bad chunking, header sections over 16 KiB, NUL bytes in paths
 * and bodies, LF-only line ends. `paths` are targets of the plane under test; `auth` are header
 * lines (without line end) that get a request past authentication.
 */
export function malformedRequests(paths: fc.Arbitrary<string>, auth: fc.Arbitrary<string[]>): fc.Arbitrary<MalformedRequest> {
  return fc
    .record({
      method,
      target: target(paths),
      version,
      host: fc.oneof(
        { weight: 9, arbitrary: fc.constant('Host: 127.0.0.1\r\n') },
        { weight: 1, arbitrary: fc.constantFrom('', 'Host: \0\r\n', 'Host: a\r\nHost: b\r\n') },
      ),
      auth,
      contentType,
      headers: fc.array(headerLine, { maxLength: 3 }),
      framing,
      lineEnd: fc.oneof({ weight: 19, arbitrary: fc.constant('\r\n') }, { weight: 1, arbitrary: fc.constant('\n') }),
    })
    .map(
      ({
        method: name,
        target: path,
        version: protocol,
        host,
        auth: authLines,
        contentType: type,
        headers,
        framing: { headers: framed, body },
        lineEnd,
      }) => {
        const head = `${name} ${path} ${protocol}\r\n${host}${authLines.map((line) => `${line}\r\n`).join('')}${type}${headers.map((line) => `${line}\r\n`).join('')}${framed}\r\n`;
        return { bytes: Buffer.from(head.replace(/\r\n/g, lineEnd) + body, 'latin1'), head: name === 'HEAD' };
      },
    );
}
