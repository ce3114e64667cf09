// The cases of h1spec (uNetworking/h1spec, `http_test.ts`, read at 30d2938): an HTTP/1.1 request-parsing check
// written for Deno, ported to the schema scripts/conformance/http1.mjs runs (see http11probe-cases.mjs for the
// schema). h1spec sends each request in one write on its own connection and reads once, for 500 ms: a request cut
// short must get no answer within that time ("the server waited"); any other must be answered with a status in
// one of the ranges given. The server under test answers `GET /` with 200; h1spec also accepts 404 for `POST /`.
//
// Its verdicts, kept as they are: `Expect: 100-continue` on a GET passes with 100 or 2xx; a 9.9 version with 4xx
// or 5xx; the missing Host case also sends `Content-Length: 5` without a body, so it passes only when the server
// refuses the request at once (a server that waits for the body times out and fails).
const waits = (request, description) => ({ request, description, wait: true })
const answers = (request, description, ranges) => ({ request, description, ranges })

const h1spec = [
  waits('G', 'Fragmented method'),
  waits('GET ', 'Fragmented URL 1'),
  waits('GET /hello', 'Fragmented URL 2'),
  waits('GET /hello ', 'Fragmented URL 3'),
  waits('GET /hello HTTP', 'Fragmented HTTP version'),
  waits('GET /hello HTTP/1.1', 'Fragmented request line'),
  waits('GET /hello HTTP/1.1\r', 'Fragmented request line newline 1'),
  waits('GET /hello HTTP/1.1\r\n', 'Fragmented request line newline 2'),
  waits('GET /hello HTTP/1.1\r\nHos', 'Fragmented field name'),
  waits('GET /hello HTTP/1.1\r\nHost:', 'Fragmented field value 1'),
  waits('GET /hello HTTP/1.1\r\nHost: ', 'Fragmented field value 2'),
  waits('GET /hello HTTP/1.1\r\nHost: localhost', 'Fragmented field value 3'),
  waits('GET /hello HTTP/1.1\r\nHost: localhost\r', 'Fragmented field value 4'),
  waits('GET /hello HTTP/1.1\r\nHost: localhost\r\n', 'Fragmented request'),
  waits('GET /hello HTTP/1.1\r\nHost: localhost\r\n\r', 'Fragmented request termination'),
  answers('GET / \r\n\r\n', 'Request without HTTP version', [[400, 599]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\n\r\n', 'Request with Expect header', [[100, 100], [200, 299]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\n\r\n', 'Valid GET request', [[200, 299]]),
  answers('GET / HTTP/1.1\r\nhoSt:\texample.com\r\nempty:\r\n\r\n', 'Valid GET request with edge cases', [[200, 299]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nX-Invalid[]: test\r\n\r\n', 'Invalid header characters', [[400, 499]]),
  answers('GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\n', 'Missing Host header', [[400, 499]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nHost: example.org\r\n\r\n', 'Multiple Host headers', [[400, 499]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: -123456789123456789123456789\r\n\r\n', 'Overflowing negative Content-Length header', [[400, 499]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: -1234\r\n\r\n', 'Negative Content-Length header', [[400, 499]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: abc\r\n\r\n', 'Non-numeric Content-Length header', [[400, 499]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nX-Empty-Header: \r\n\r\n', 'Empty header value', [[200, 299]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nX-Bad-Control-Char: test\x07\r\n\r\n', 'Header containing invalid control character', [[400, 499]]),
  answers('GET / HTTP/9.9\r\nHost: example.com\r\n\r\n', 'Invalid HTTP version', [[400, 599]]),
  answers('Extra lineGET / HTTP/1.1\r\nHost: example.com\r\n\r\n', 'Invalid prefix of request', [[400, 599]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\n\rSome-Header: Test\r\n\r\n', 'Invalid line ending', [[400, 499]]),
  answers('POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello', 'Valid POST request with body', [[200, 299], [404, 404]]),
  answers('GET / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n', 'Conflicting Transfer-Encoding and Content-Length', [[400, 499]]),
]

export const cases = h1spec.map((c, i) => ({
  id: `H1SPEC-${String(i + 1).padStart(2, '0')}`,
  suite: 'h1spec',
  description: c.description,
  rfc: null,
  level: 'must',
  scored: true,
  request: c.request,
  // h1spec reads the first bytes that arrive (an interim 100 counts as the answer).
  firstStatusOnly: true,
  readMs: 500,
  verdict: c.wait ? [[{ timedOut: true }, 'pass']] : c.ranges.map((status) => [{ status }, 'pass']),
}))
