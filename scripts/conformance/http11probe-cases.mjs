// Http11Probe's test cases, ported as data.
//
// WHAT THIS IS
// A port of the HTTP/1.1 conformance suite Http11Probe (github.com/MDA2AV/Http11Probe, C#/.NET) into plain data:
// each case's request bytes and its verdict logic (Http11Probe's ExpectedBehavior / CustomValidator / sequence
// Validator) expressed as ordered rules. BehavioralAnalyzer notes are informational in Http11Probe and are left out.
// Versions read (the public-code index holds several versions of some files; the newest one was used, identified by
// the commit read_file reported or, where it was reached by the index's file id, by that id):
//   TestCases/Suites/ComplianceSuite.cs      newest: index file 52685374661 (an older one, 09a1f5b7c6d81c6f348ad5a4003344527de76a18,
//                                            still had the COMP-UPGRADE-* cases that the newest moved to WebSocketsSuite.cs
//                                            and lacked its "close/timeout = warn" refinements)
//   TestCases/Suites/WebSocketsSuite.cs      index file 52519644050 (a suite file added upstream; its WS-* ids are included)
//   TestCases/Suites/SmugglingSuite.cs       newest: index file 52746514785 (= 12c26d8aec5e112b1d7a6625d1fc5ea1bc468869 plus
//                                            405-is-pass on SMUG-OPTIONS-CL-BODY, SMUG-OPTIONS-CL-BODY-DESYNC, SMUG-OPTIONS-TE-OBS-FOLD)
//   TestCases/Suites/MalformedInputSuite.cs  newest: index file 56810214255 (newer than 3ba0ce93de6907cac1f90cf3e66465b4390e203a)
//   TestCases/Suites/NormalizationSuite.cs   756bd02d204efc260ffaf8082a1d619886534c31
//   TestCases/Suites/CookieSuite.cs          f06b473155f1d432af880592da09ca6c6fcf689c
//   TestCases/Suites/CapabilitiesSuite.cs    140546730718b7c109a61743f900dc6ded1283d2
//   Runner/TestRunner.cs                     140546730718b7c109a61743f900dc6ded1283d2
//   Client/RawTcpClient.cs                   564021baca04d251ba1c643dd8d425bf05491b77
//   Response/ResponseParser.cs               fa7d5392b15f1b25a3a6cb8845753f27d8d32072
//   TestCases/ExpectedBehavior.cs            index file 42954482937
// Cases per suite: compliance 71, websockets 5, smuggling 87 (64 from GetTestCases + 23 from GetSequenceTestCases, 11
// of which are one-step sequences written here as single requests), malformed 26, normalization 5, cookie 12,
// capabilities 9; 215 in all. No case was left out.
//
// WHAT THE SERVER UNDER TEST MUST SERVE (from Http11Probe's reference servers, e.g. src/Servers/GlyphServer, and the cases)
//   GET / and HEAD /      200 with a small body (HEAD: no body); ideally Date, Content-Type, and ETag / Last-Modified
//                         (the capabilities cases warn without them and expect 304 to If-None-Match / If-Modified-Since).
//   POST /                200 echoing the request body (a static "OK" body is also accepted, as Http11Probe does).
//   OPTIONS / and *       2xx (with Allow) — or 405; DELETE / ideally 405 with Allow (anything else is a warn).
//   GET|POST /echo        200 whose body lists the request headers as received, one per line "Name: Value".
//   GET /cookie           200 whose body lists the parsed cookies, one per line "name=value" (Cookie header split on
//                         ';', each pair left-trimmed, split at the first '='); 404 only downgrades those cases to warn.
//   Everything else (TRACE, CONNECT, FOOBAR, odd targets) may answer as the framework does; the verdicts say what passes.
//
// HOW A CASE RUNS (Http11Probe's runner semantics, which the rules below assume)
//   One fresh TCP connection per case; connect and read timeouts 5 s (Http11Probe's --timeout default).
//   `request` is written in one write. Then one read: until a complete header block (CRLFCRLF) has arrived, then
//   ~100 ms more to collect what is already there, then ~50 ms later a check whether the server closed. Http11Probe
//   parses only the first status line + headers ("the first response"); its Body is every byte after the first
//   CRLFCRLF (so it can include later pipelined responses).
//   `steps` are written in order on the same connection. A step's `send` is written after `pauseMs` (default 0).
//   A step with `awaitResponse: true` is followed by one read as above before the next step is written; if that
//   read ended with the connection closed by the server or timed out (no complete header block), the remaining
//   steps are NOT sent (Http11Probe marks them "not executed"). A step is never sent once the server has closed.
//   After the last step the runner reads as for a single request. Responses are counted in order across the
//   whole connection (index 0 = the first response, normally the answer to step 0).
//
// REQUEST TEMPLATING (all strings are latin1; \xNN is a raw byte)
//   {host}        the Host value (host:port), filled in by the runner.
//   repeat        { marker, text, times, join? } — marker is replaced by `times` copies of `text` joined by `join`
//                 (default ''); inside `text`, {i} is the 0-based copy index (e.g. 'X-H-{i}: value\r\n').
//   {begin:x} … {end:x}   marks region x (the markers themselves are removed, they send nothing);
//   {len:x}       decimal byte length of region x;   {hexlen:x}  lowercase hex byte length of region x.
//                 Lengths are measured after {host}/repeat substitution and after any {len:*}/{hexlen:*} inside the
//                 region is resolved (resolve regions with no unresolved length placeholder first). Used for
//                 Content-Length / chunk sizes that depend on the host length, e.g. the SMUGGLED-GET cases.
//   captures      { '{name}': { response, header, fallback, transform? } } — in later steps' `send`, {name} is replaced
//                 by header `header` (case-insensitive) of response number `response` (0-based, as read so far);
//                 when that header is absent the whole value is `fallback`. transform 'unquote': drop a leading "W/",
//                 then one pair of surrounding double quotes; 'weak': prefix "W/" unless it already starts with "W/".
//
// VERDICT RULES: [conditions, result] tried in order; the first whose conditions all hold gives the result; none → 'fail'.
// An empty conditions object {} always holds. "First response" = the first status line + headers received.
//   status: n | [lo, hi]     first response's status (inclusive range). Holds only if there is a response.
//   noResponse: true | false  true: no complete status line was received at all; false: one was.
//   closed: true | false      the server closed the connection (true) or it was still open (false) when reading ended.
//   timedOut: true            nothing (more) arrived within the read timeout and the connection was still open.
//                             Http11Probe's ConnectionState.TimedOut (read timed out before any complete header block)
//                             is written { noResponse: true, timedOut: true }; ClosedByServer is { closed: true }.
//   responses: n / responsesAtLeast: n   number of HTTP status lines ("HTTP/x.y NNN") received on the connection.
//                             (Http11Probe counts them only within its read window; a runner reading longer may see more.)
//   header: { name, present | equals | matches }   on the first response; name case-insensitive; `matches` is a JS
//                             regex source tested against the trimmed value.
//   bodyEquals: 'text'        the first response's body, de-chunked when Transfer-Encoding is chunked, with trailing
//                             CR/LF trimmed, equals text (Http11Probe's GetEffectiveBody).
//   bodyIncludes: 'text' | ['a', 'b', …]   the first response's body (as received) contains text / every listed text.
//   NEW KEYS (beyond the brief's list):
//   bodyMatches: { regex, flags? }   the first response's body (as received) matches the JS RegExp(regex, flags).
//   nothingAfterHeaders: true  no byte at all followed the first response's CRLFCRLF within the read (Http11Probe's
//                             "Body is null or empty" test for HEAD; no Content-Length-based framing is applied).
//   nth: { index, status?, header?, bodyIncludes?, bodyEquals? } (or an array of such)   the same per-response tests
//                             applied to response number `index` (0-based, in arrival order on the connection); fails
//                             if that response does not exist. Used for sequence cases ("step 2's response").
//   stepsSent: n              exactly n steps were written (fewer than all means the connection closed or a read
//                             timed out after an awaitResponse step).
//   echoHeader: { name, value, exact? }   the first response's body, read as "Name: Value" lines (split on \n; name =
//                             text before the first ':' of a line, not trimmed; value = the rest with leading
//                             whitespace and a trailing \r removed), has a line whose value equals `value`
//                             (ASCII case-insensitive) and whose name equals `name` — case-insensitively, or exactly
//                             when exact: true. Used by the normalization cases against /echo.
//   Results: 'pass' | 'warn' | 'fail'. Http11Probe's TestVerdict.Error (only the capabilities cases return it, when
//   the first GET does not get a 2xx) is mapped to 'fail'.
//
// DEFAULT ExpectedBehavior MAPPING (ExpectedBehavior.Evaluate): ExpectedStatus S alone → [[{ status: S }, 'pass']];
// with AllowConnectionClose → also [{ noResponse: true }, 'pass'] — Http11Probe passes ANY missing response then,
// closed or timed out (`if (response is null) return AllowConnectionClose ? Pass : Fail`). CustomValidator branches
// are transcribed rule by rule; "response is null && state == ClosedByServer" is { noResponse: true, closed: true }.

// ── shared requests and rule patterns ─────────────────────────────────────────────────────────────────────────────
const GET = 'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n'
const GET_KEEPALIVE = 'GET / HTTP/1.1\r\nHost: {host}\r\nConnection: keep-alive\r\n\r\n'
const CLOSED_PASS = [{ noResponse: true, closed: true }, 'pass']
const CLOSED_WARN = [{ noResponse: true, closed: true }, 'warn']
const TIMEOUT_PASS = [{ noResponse: true, timedOut: true }, 'pass']
const NO_RESPONSE_FAIL = [{ noResponse: true }, 'fail']
/** Newer ComplianceSuite: "response is null → ClosedByServer or TimedOut ? Warn : Fail". */
const SILENT_WARN = [[{ noResponse: true, closed: true }, 'warn'], [{ noResponse: true, timedOut: true }, 'warn']]
/** CapabilitiesSuite: step 1 with no response or a non-2xx response is TestVerdict.Error (mapped to fail). */
const CAP_ERRORS = [[{ noResponse: true }, 'fail'], [{ status: [0, 199] }, 'fail'], [{ status: [300, 999] }, 'fail']]

/** ExpectedStatus = S. */
const exact = (s) => [[{ status: s }, 'pass']]
/** ExpectedStatus = S, AllowConnectionClose = true. */
const exactOrClose = (s) => [[{ status: s }, 'pass'], [{ noResponse: true }, 'pass']]
const statusOrClose = exactOrClose
/** ExpectedStatus = Range2xx. */
const status2xx = () => [[{ status: [200, 299] }, 'pass']]
/** "400 or 2xx": null → closed ? Pass : Fail; 400 → Pass; 2xx → Warn. */
const reject400Warn2xx = () => [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: [200, 299] }, 'warn']]
/** "400/501 or close". */
const reject400or501 = () => [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 501 }, 'pass']]
/** "400, close, or timeout = warn". */
const strict400SilentWarn = () => [...SILENT_WARN, [{ status: 400 }, 'pass']]
/** "400/close/timeout": a response must be 400; no response (closed or timed out) passes. */
const only400OrSilence = () => [[{ status: 400 }, 'pass'], CLOSED_PASS, TIMEOUT_PASS]
/** EchoValidator: 2xx whose (de-chunked, CR/LF-trimmed) body is the sent body, or the static "OK". */
const echo = (body) => [[{ status: [200, 299], bodyEquals: body }, 'pass'], [{ status: [200, 299], bodyEquals: 'OK' }, 'pass']]
/** "!101": null → closed ? Pass : Fail; 101 → Fail; anything else → Pass. */
const not101 = () => [CLOSED_PASS, NO_RESPONSE_FAIL, [{ status: 101 }, 'fail'], [{}, 'pass']]
/** CL/TE conflict sequences: step 1 answered 400 (or `also`), or the connection closed after step 1 (step 2 never sent). */
const rejectOrCloseAfterFirst = (also) => [[{ status: 400 }, 'pass'], ...(also ? [[{ status: also }, 'pass']] : []), [{ stepsSent: 1, closed: true }, 'pass']]
/** *-SMUGGLED-GET: two or more status lines → Fail; 400 → Pass; closed → Pass; else Fail (kept open = MUST-close violated). */
const smuggledGet = () => [[{ responsesAtLeast: 2 }, 'fail'], [{ status: 400 }, 'pass'], [{ closed: true }, 'pass']]
/** Unread-body desync sequences: 400 (or `also`) / close after step 1 pass; after a 2xx, follow-up 400 = warn, 2xx = pass. */
const bodyDesync = (also) => [[{ status: 400 }, 'pass'], ...(also ? [[{ status: also }, 'pass']] : []), [{ stepsSent: 1, closed: true }, 'pass'],
  [{ status: [200, 299], nth: { index: 1, status: 400 } }, 'warn'], [{ status: [200, 299], nth: { index: 1, status: [200, 299] } }, 'pass'],
  [{ status: [200, 299] }, 'warn']]
/** NormalizationSuite.MakeValidator: >= 400 passes; on 2xx the /echo body decides: normalized name → fail, preserved → warn. */
const normalization = (standardName, malformedName, probe) => [CLOSED_PASS, [{ status: [400, 999] }, 'pass'],
  [{ status: [200, 299], echoHeader: { name: standardName, value: probe } }, 'fail'],
  [{ status: [200, 299], echoHeader: { name: malformedName, value: probe } }, 'warn'],
  [{ status: [200, 299] }, 'pass']]
/** CookieSuite.MakeParsedValidator. */
const parsedCookies = (pairs) => [CLOSED_WARN, [{ status: 404 }, 'warn'], [{ status: [200, 299], bodyIncludes: pairs }, 'pass'], [{ status: [200, 299] }, 'fail'], [{ status: 400 }, 'warn']]
/** COOK-PARSED-EMPTY-VAL / -SPECIAL: 404 warn, 2xx or 400 pass. */
const parsedNoCrash = () => [CLOSED_WARN, [{ status: 404 }, 'warn'], [{ status: [200, 299] }, 'pass'], [{ status: 400 }, 'pass']]

export const cases = [
  // ───────────────────────────── ComplianceSuite.cs ─────────────────────────────
  { id: 'COMP-BASELINE', suite: 'compliance', description: 'Valid GET request — confirms server is reachable', rfc: null, level: 'notApplicable', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: status2xx() },
  { id: 'RFC9112-2.2-BARE-LF-REQUEST-LINE', suite: 'compliance', description: 'Bare LF in request line should be rejected, but MAY be accepted', rfc: 'RFC 9112 §2.2', level: 'may', scored: true,
    request: 'GET / HTTP/1.1\nHost: {host}\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'RFC9112-2.2-BARE-LF-HEADER', suite: 'compliance', description: 'Bare LF in header should be rejected, but MAY be accepted', rfc: 'RFC 9112 §2.2', level: 'may', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\nX-Test: value\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'RFC9112-5.1-OBS-FOLD', suite: 'compliance', description: 'Obs-fold (line folding) in headers should be rejected', rfc: 'RFC 9112 §5.1', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nX-Test: value\r\n continued\r\n\r\n', verdict: exact(400) },
  { id: 'RFC9110-5.6.2-SP-BEFORE-COLON', suite: 'compliance', description: 'Whitespace between header name and colon must be rejected', rfc: 'RFC 9112 §5', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nX-Test : value\r\n\r\n', verdict: exact(400) },
  { id: 'RFC9112-3-MULTI-SP-REQUEST-LINE', suite: 'compliance', description: 'Multiple spaces between request-line components — SHOULD reject but MAY parse leniently', rfc: 'RFC 9112 §3', level: 'should', scored: true,
    request: 'GET  / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, [{ status: 400 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'RFC9112-7.1-MISSING-HOST', suite: 'compliance', description: 'Request without Host header must be rejected with 400', rfc: 'RFC 9112 §3.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\n\r\n', verdict: exact(400) },
  { id: 'RFC9112-2.3-INVALID-VERSION', suite: 'compliance', description: 'Invalid HTTP version must be rejected', rfc: 'RFC 9112 §2.3', level: 'should', scored: true,
    request: 'GET / HTTP/9.9\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, [{ status: 400 }, 'pass'], [{ status: 505 }, 'pass']] },
  { id: 'RFC9112-5-EMPTY-HEADER-NAME', suite: 'compliance', description: 'Empty header name (leading colon) must be rejected', rfc: 'RFC 9112 §5', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\n: empty-name\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'RFC9112-3-CR-ONLY-LINE-ENDING', suite: 'compliance', description: 'CR without LF as line ending must be rejected', rfc: 'RFC 9112 §2.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\rHost: {host}\r\n\r\n', verdict: strict400SilentWarn() },
  { id: 'RFC9112-3-MISSING-TARGET', suite: 'compliance', description: 'Request line with no target (space but no path) must be rejected', rfc: 'RFC 9112 §3', level: 'must', scored: true,
    request: 'GET HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: strict400SilentWarn() },
  { id: 'RFC9112-3.2-FRAGMENT-IN-TARGET', suite: 'compliance', description: 'Fragment (#) in request-target — not part of origin-form grammar', rfc: 'RFC 9112 §3.2', level: 'should', scored: true,
    request: 'GET /path#frag HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, [{ status: 400 }, 'pass'], [{ status: 404 }, 'warn'], [{ status: [200, 299] }, 'warn']] },
  { id: 'RFC9112-2.3-HTTP09-REQUEST', suite: 'compliance', description: 'HTTP/0.9 request (no version) must be rejected', rfc: 'RFC 9112 §2.3', level: 'should', scored: true,
    request: 'GET /\r\n', verdict: only400OrSilence() },
  { id: 'RFC9112-5-INVALID-HEADER-NAME', suite: 'compliance', description: 'Header name with invalid characters (brackets) must be rejected', rfc: 'RFC 9112 §5', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nBad[Name: value\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'RFC9112-5-HEADER-NO-COLON', suite: 'compliance', description: 'Header line without colon must be rejected', rfc: 'RFC 9112 §5', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nNoColonHere\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'RFC9110-5.4-DUPLICATE-HOST', suite: 'compliance', description: 'Duplicate Host headers with different values must be rejected', rfc: 'RFC 9112 §3.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nHost: other.example.com\r\n\r\n', verdict: exact(400) },
  { id: 'RFC9112-6.1-CL-NON-NUMERIC', suite: 'compliance', description: 'Non-numeric Content-Length must be rejected', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: abc\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'RFC9112-6.1-CL-PLUS-SIGN', suite: 'compliance', description: 'Content-Length with plus sign must be rejected', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: +5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'COMP-WHITESPACE-BEFORE-HEADERS', suite: 'compliance', description: 'Whitespace before first header line must be rejected', rfc: 'RFC 9112 §2.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\n \r\nHost: {host}\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'COMP-DUPLICATE-HOST-SAME', suite: 'compliance', description: 'Duplicate Host headers with identical values must be rejected', rfc: 'RFC 9112 §3.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nHost: {host}\r\n\r\n', verdict: exact(400) },
  { id: 'COMP-HOST-WITH-USERINFO', suite: 'compliance', description: 'Host header with userinfo (user@host) must be rejected', rfc: 'RFC 9112 §3.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: user@{host}\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'COMP-HOST-WITH-PATH', suite: 'compliance', description: 'Host header with path component must be rejected', rfc: 'RFC 9112 §3.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}/path\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'COMP-ASTERISK-WITH-GET', suite: 'compliance', description: 'Asterisk-form (*) request-target with GET must be rejected', rfc: 'RFC 9112 §3.2.4', level: 'must', scored: true,
    request: 'GET * HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: strict400SilentWarn() },
  { id: 'COMP-OPTIONS-STAR', suite: 'compliance', description: 'OPTIONS * is the only valid asterisk-form request', rfc: 'RFC 9112 §3.2.4', level: 'must', scored: true,
    request: 'OPTIONS * HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, [{ status: [200, 299] }, 'pass'], [{ status: 405 }, 'pass']] },
  { id: 'COMP-UNKNOWN-TE-501', suite: 'compliance', description: 'Unknown Transfer-Encoding without CL should be rejected with 501', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: gzip\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 501 }, 'pass']] },
  { id: 'COMP-LEADING-CRLF', suite: 'compliance', description: 'Leading CRLF before request-line — server may ignore per RFC', rfc: 'RFC 9112 §2.2', level: 'should', scored: true,
    request: '\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, [{ status: 400 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-ABSOLUTE-FORM', suite: 'compliance', description: 'Absolute-form request-target — server should accept per RFC', rfc: 'RFC 9112 §3.2.2', level: 'should', scored: false,
    request: 'GET http://{host}/ HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, [{ status: [200, 299] }, 'pass'], [{ status: 400 }, 'warn']] },
  { id: 'COMP-METHOD-CASE', suite: 'compliance', description: "Lowercase method 'get' — methods are case-sensitive per RFC", rfc: 'RFC 9110 §9.1', level: 'should', scored: true,
    request: 'get / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, [{ status: 400 }, 'pass'], [{ status: 405 }, 'pass'], [{ status: 501 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-POST-CL-BODY', suite: 'compliance', description: 'POST with Content-Length and matching body must be accepted', rfc: 'RFC 9112 §6.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello', verdict: echo('hello') },
  { id: 'COMP-POST-CL-ZERO', suite: 'compliance', description: 'POST with Content-Length: 0 and no body must be accepted', rfc: 'RFC 9112 §6.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n', verdict: statusOrClose([200, 299]) },
  { id: 'COMP-POST-NO-CL-NO-TE', suite: 'compliance', description: 'POST with neither Content-Length nor Transfer-Encoding — implicit zero-length body', rfc: 'RFC 9112 §6.3', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: statusOrClose([200, 299]) },
  { id: 'COMP-POST-CL-UNDERSEND', suite: 'compliance', description: 'POST with Content-Length: 10 but only 5 bytes sent — incomplete body', rfc: 'RFC 9112 §6.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 10\r\n\r\nhello', verdict: only400OrSilence() },
  { id: 'COMP-CHUNKED-BODY', suite: 'compliance', description: 'Valid single-chunk POST must be accepted', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n', verdict: echo('hello') },
  { id: 'COMP-CHUNKED-MULTI', suite: 'compliance', description: 'Valid multi-chunk POST must be accepted', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n', verdict: echo('hello world') },
  { id: 'COMP-CHUNKED-EMPTY', suite: 'compliance', description: 'Zero-length chunked body (just terminator) must be accepted', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', verdict: statusOrClose([200, 299]) },
  { id: 'COMP-CHUNKED-NO-FINAL', suite: 'compliance', description: 'Chunked body without zero terminator — incomplete transfer', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n', verdict: only400OrSilence() },
  { id: 'COMP-METHOD-CONNECT', suite: 'compliance', description: 'CONNECT to an origin server must be rejected', rfc: 'RFC 9110 §9.3.6', level: 'should', scored: true,
    request: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 405 }, 'pass'], [{ status: 501 }, 'pass']] },
  { id: 'COMP-EXPECT-UNKNOWN', suite: 'compliance', description: 'Unknown Expect value should be rejected with 417', rfc: 'RFC 9110 §10.1.1', level: 'may', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nExpect: 200-ok\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 417 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-GET-WITH-CL-BODY', suite: 'compliance', description: 'GET with Content-Length and body — semantically unusual', rfc: 'RFC 9110 §9.3.1', level: 'may', scored: false,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ noResponse: false }, 'warn']] },
  { id: 'COMP-CHUNKED-EXTENSION', suite: 'compliance', description: 'Chunk extension (valid per RFC) — server should accept or may reject', rfc: 'RFC 9112 §7.1.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=value\r\nhello\r\n0\r\n\r\n',
    verdict: [CLOSED_WARN, [{ status: 400 }, 'warn'], ...echo('hello')] },
  { id: 'COMP-METHOD-TRACE', suite: 'compliance', description: 'TRACE request — should be disabled in production', rfc: 'RFC 9110 §9.3.8', level: 'should', scored: false,
    request: 'TRACE / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 405 }, 'pass'], [{ status: 501 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-HOST-EMPTY-VALUE', suite: 'compliance', description: 'Empty Host header value must be rejected', rfc: 'RFC 9112 §3.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: \r\n\r\n', verdict: exactOrClose(400) },
  { id: 'COMP-REQUEST-LINE-TAB', suite: 'compliance', description: 'Tab as request-line delimiter — SHOULD reject but MAY parse on whitespace', rfc: 'RFC 9112 §3', level: 'should', scored: true,
    request: 'GET\t/ HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, [{ status: 400 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-VERSION-MISSING-MINOR', suite: 'compliance', description: 'HTTP/1 with no minor version digit is invalid', rfc: 'RFC 9112 §2.3', level: 'must', scored: true,
    request: 'GET / HTTP/1\r\nHost: {host}\r\n\r\n', verdict: strict400SilentWarn() },
  { id: 'COMP-VERSION-LEADING-ZEROS', suite: 'compliance', description: 'HTTP/01.01 — leading zeros in version digits are invalid', rfc: 'RFC 9112 §2.3', level: 'must', scored: true,
    request: 'GET / HTTP/01.01\r\nHost: {host}\r\n\r\n', verdict: strict400SilentWarn() },
  { id: 'COMP-VERSION-WHITESPACE', suite: 'compliance', description: 'HTTP/ 1.1 — whitespace inside version token is invalid', rfc: 'RFC 9112 §2.3', level: 'must', scored: true,
    request: 'GET / HTTP/ 1.1\r\nHost: {host}\r\n\r\n', verdict: strict400SilentWarn() },
  { id: 'COMP-CONNECTION-CLOSE', suite: 'compliance', description: 'Server must close connection after responding to Connection: close', rfc: 'RFC 9112 §9.3', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n', verdict: [[{ status: [200, 299], closed: true }, 'pass']] },
  { id: 'COMP-HTTP10-DEFAULT-CLOSE', suite: 'compliance', description: 'HTTP/1.0 without keep-alive — server should close connection after response', rfc: 'RFC 9112 §9.3', level: 'should', scored: true,
    request: 'GET / HTTP/1.0\r\nHost: {host}\r\n\r\n', verdict: [[{ status: [200, 299], closed: true }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-HTTP10-NO-HOST', suite: 'compliance', description: 'HTTP/1.0 without Host header — valid per HTTP/1.0', rfc: 'RFC 9112 §3.2', level: 'may', scored: false,
    request: 'GET / HTTP/1.0\r\n\r\n', verdict: [CLOSED_PASS, [{ status: [200, 299] }, 'warn'], [{ status: 400 }, 'pass']] },
  { id: 'COMP-HTTP12-VERSION', suite: 'compliance', description: 'HTTP/1.2 — higher minor version should be accepted as HTTP/1.x compatible', rfc: 'RFC 9112 §2.3', level: 'may', scored: false,
    request: 'GET / HTTP/1.2\r\nHost: {host}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: [200, 299] }, 'warn'], [{ status: 505 }, 'warn']] },
  { id: 'COMP-TRACE-WITH-BODY', suite: 'compliance', description: 'TRACE with Content-Length body should be rejected', rfc: 'RFC 9110 §9.3.8', level: 'should', scored: false,
    request: 'TRACE / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 405 }, 'pass'], [{ status: 501 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-CHUNKED-TRAILER-VALID', suite: 'compliance', description: 'Valid chunked body with trailer field should be accepted', rfc: 'RFC 9112 §7.1.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n', verdict: echo('hello') },
  { id: 'COMP-CHUNKED-HEX-UPPERCASE', suite: 'compliance', description: 'Chunk size with uppercase hex (A = 10) should be accepted', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\nA\r\nhelloworld\r\n0\r\n\r\n', verdict: echo('helloworld') },
  { id: 'COMP-RANGE-POST', suite: 'compliance', description: 'Range header on POST must be ignored — Range only applies to GET', rfc: 'RFC 9110 §14.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nRange: bytes=0-10\r\n\r\nhello', verdict: [[{ status: 206 }, 'fail'], [{ status: [200, 299] }, 'pass']] },
  { id: 'COMP-HEAD-NO-BODY', suite: 'compliance', description: 'HEAD response must not contain a message body', rfc: 'RFC 9110 §9.3.2', level: 'must', scored: true,
    request: 'HEAD / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [[{ status: [200, 299], nothingAfterHeaders: true }, 'pass']] },
  { id: 'COMP-UNKNOWN-METHOD', suite: 'compliance', description: 'Unrecognized method should be rejected with 501 or 405', rfc: 'RFC 9110 §9.1', level: 'should', scored: true,
    request: 'FOOBAR / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 501 }, 'pass'], [{ status: 405 }, 'pass'], [{ status: 400 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-405-ALLOW', suite: 'compliance', description: '405 response must include an Allow header', rfc: 'RFC 9110 §15.5.6', level: 'must', scored: true,
    request: 'DELETE / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [NO_RESPONSE_FAIL, [{ status: 405, header: { name: 'Allow', present: true } }, 'pass'], [{ status: 405 }, 'fail'], [{}, 'warn']] },
  { id: 'COMP-DATE-HEADER', suite: 'compliance', description: 'Origin server must include Date header in responses', rfc: 'RFC 9110 §6.6.1', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [[{ status: [200, 299], header: { name: 'Date', present: true } }, 'pass']] },
  { id: 'COMP-DATE-FORMAT', suite: 'compliance', description: 'Date header should use IMF-fixdate format', rfc: 'RFC 9110 §5.6.7', level: 'should', scored: false,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n',
    verdict: [[{ status: [200, 299], header: { name: 'Date', present: false } }, 'warn'],
      [{ status: [200, 299], header: { name: 'Date', matches: '^\\s*(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \\d{4} ([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d GMT\\s*$' } }, 'pass'],
      [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-NO-1XX-HTTP10', suite: 'compliance', description: 'Server must not send 1xx responses to an HTTP/1.0 client', rfc: 'RFC 9110 §15.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.0\r\nHost: {host}\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello', verdict: [CLOSED_PASS, TIMEOUT_PASS, NO_RESPONSE_FAIL, [{ status: [100, 199] }, 'fail'], [{}, 'pass']] },
  { id: 'COMP-NO-CL-IN-204', suite: 'compliance', description: 'Server must not send Content-Length in a 204 response', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'OPTIONS / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [NO_RESPONSE_FAIL, [{ status: 405 }, 'pass'], [{ status: 204, header: { name: 'Content-Length', present: true } }, 'fail'], [{ status: 204 }, 'pass'], [{}, 'warn']] },
  { id: 'COMP-OPTIONS-ALLOW', suite: 'compliance', description: 'OPTIONS response should include Allow header listing supported methods', rfc: 'RFC 9110 §9.3.7', level: 'should', scored: true,
    request: 'OPTIONS / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [[{ status: 405 }, 'pass'], [{ status: [200, 299], header: { name: 'Allow', present: true } }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-CONTENT-TYPE', suite: 'compliance', description: 'Response with content should include Content-Type header', rfc: 'RFC 9110 §8.3', level: 'should', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [[{ status: [200, 299], header: { name: 'Content-Type', present: true } }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-VERSION-CASE', suite: 'compliance', description: "HTTP version is case-sensitive — lowercase 'http' must be rejected", rfc: 'RFC 9112 §2.3', level: 'must', scored: true,
    request: 'GET / http/1.1\r\nHost: {host}\r\n\r\n', verdict: strict400SilentWarn() },
  { id: 'COMP-LONG-URL-OK', suite: 'compliance', description: 'Server should accept request-lines of at least 8000 octets', rfc: 'RFC 9112 §3', level: 'should', scored: true,
    repeat: { marker: '{big}', text: 'a', times: 7900 },
    request: 'GET /{big} HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [...SILENT_WARN, NO_RESPONSE_FAIL, [{ status: 414 }, 'fail'], [{}, 'pass']] },
  { id: 'COMP-SPACE-IN-TARGET', suite: 'compliance', description: 'Whitespace inside request-target is invalid', rfc: 'RFC 9112 §3.2', level: 'must', scored: true,
    request: 'GET /pa th HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: strict400SilentWarn() },
  { id: 'COMP-DUPLICATE-CT', suite: 'compliance', description: 'Duplicate Content-Type headers with different values', rfc: 'RFC 9110 §5.3', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nContent-Type: text/plain\r\nContent-Type: text/html\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'COMP-TRACE-SENSITIVE', suite: 'compliance', description: 'TRACE should exclude sensitive headers from echoed response', rfc: 'RFC 9110 §9.3.8', level: 'should', scored: false,
    request: 'TRACE / HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer secret-token-123\r\n\r\n',
    verdict: [CLOSED_PASS, [{ status: 405 }, 'pass'], [{ status: 501 }, 'pass'], [{ status: [200, 299], bodyMatches: { regex: 'secret-token-123', flags: 'i' } }, 'warn'], [{ status: [200, 299] }, 'pass']] },
  { id: 'COMP-RANGE-INVALID', suite: 'compliance', description: 'Invalid Range header syntax should be ignored', rfc: 'RFC 9110 §14.2', level: 'may', scored: false,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nRange: bytes=abc-xyz\r\n\r\n', verdict: [CLOSED_WARN, NO_RESPONSE_FAIL, [{ status: 206 }, 'warn'], [{ status: [200, 299] }, 'pass'], [{ status: 416 }, 'pass'], [{}, 'warn']] },
  { id: 'COMP-ACCEPT-NONSENSE', suite: 'compliance', description: 'Unrecognized Accept value — server may return 406 or default representation', rfc: 'RFC 9110 §12.5.1', level: 'should', scored: false,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nAccept: application/x-nonsense\r\n\r\n', verdict: [CLOSED_WARN, [{ status: 406 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'COMP-POST-UNSUPPORTED-CT', suite: 'compliance', description: 'POST with unrecognized Content-Type — server may return 415', rfc: 'RFC 9110 §15.5.16', level: 'may', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nContent-Type: application/x-nonsense\r\n\r\nhello', verdict: [CLOSED_WARN, NO_RESPONSE_FAIL, [{ status: 415 }, 'pass'], [{ status: [200, 299] }, 'pass'], [{}, 'warn']] },

  // ───────────────────────────── WebSocketsSuite.cs (the COMP-UPGRADE-* cases moved here) ─────────────────────────────
  { id: 'WS-UPGRADE-POST', suite: 'websockets', description: 'WebSocket upgrade via POST must not be accepted', rfc: 'RFC 6455 §4.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n', verdict: not101() },
  { id: 'WS-UPGRADE-MISSING-CONN', suite: 'websockets', description: 'Upgrade header without Connection: Upgrade must not trigger protocol switch', rfc: 'RFC 9110 §7.8', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n', verdict: not101() },
  { id: 'WS-UPGRADE-UNKNOWN', suite: 'websockets', description: 'Upgrade to unknown protocol must not return 101', rfc: 'RFC 9110 §7.8', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: totally-made-up/1.0\r\n\r\n', verdict: not101() },
  { id: 'WS-UPGRADE-INVALID-VER', suite: 'websockets', description: 'WebSocket upgrade with unsupported version — should return 426', rfc: 'RFC 6455 §4.4', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 99\r\n\r\n',
    verdict: [CLOSED_PASS, NO_RESPONSE_FAIL, [{ status: 101 }, 'fail'], [{ status: 426 }, 'pass'], [{ status: [200, 299] }, 'warn'], [{}, 'pass']] },
  { id: 'WS-UPGRADE-HTTP10', suite: 'websockets', description: 'Upgrade header in HTTP/1.0 request must be ignored', rfc: 'RFC 9110 §7.8', level: 'must', scored: true,
    request: 'GET / HTTP/1.0\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n', verdict: not101() },
  // ───────────────────────────── SmugglingSuite.cs (GetTestCases) ─────────────────────────────
  { id: 'SMUG-CL-TE-BOTH', suite: 'smuggling', description: 'Both Content-Length and Transfer-Encoding present — server MAY reject or process with TE alone', rfc: 'RFC 9112 §6.1', level: 'oughtTo', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 23\r\nTransfer-Encoding: chunked\r\n\r\nD\r\nhello-bananas\r\n0\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-DUPLICATE-CL', suite: 'smuggling', description: 'Duplicate Content-Length with different values must be rejected', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nContent-Length: 10\r\n\r\nhelloworld', verdict: exactOrClose(400) },
  { id: 'SMUG-CL-LEADING-ZEROS', suite: 'smuggling', description: 'Content-Length with leading zeros — valid per 1*DIGIT grammar but may cause parser disagreement', rfc: 'RFC 9110 §8.6', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 005\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-TE-XCHUNKED', suite: 'smuggling', description: 'Transfer-Encoding: xchunked must not be treated as chunked', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: xchunked\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400or501() },
  { id: 'SMUG-TE-TRAILING-SPACE', suite: 'smuggling', description: "Transfer-Encoding: 'chunked ' (trailing space) must not be treated as chunked", rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked \r\nContent-Length: 5\r\n\r\nhello',
    verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 501 }, 'pass'], [{ status: [200, 299], closed: true }, 'warn']] },
  { id: 'SMUG-TE-SP-BEFORE-COLON', suite: 'smuggling', description: 'Transfer-Encoding with space before colon must be rejected', rfc: 'RFC 9112 §5', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-CL-NEGATIVE', suite: 'smuggling', description: 'Negative Content-Length must be rejected', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: -1\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CLTE-PIPELINE', suite: 'smuggling', description: 'CL.TE conflict — both Content-Length and Transfer-Encoding: chunked present', rfc: 'RFC 9112 §6.1', level: 'may', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    verdict: [[{ status: 400 }, 'pass'], [{ closed: true }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'SMUG-TECL-PIPELINE', suite: 'smuggling', description: 'TE.CL conflict — Transfer-Encoding: chunked + conflicting Content-Length', rfc: 'RFC 9112 §6.1', level: 'may', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nContent-Length: 30\r\n\r\n0\r\n\r\n',
    verdict: [[{ status: 400 }, 'pass'], [{ closed: true }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'SMUG-CL-TRAILING-SPACE', suite: 'smuggling', description: 'Content-Length with trailing space — OWS trimming is valid per RFC 9110 §5.5', rfc: 'RFC 9110 §5.5', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5 \r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-TE-DOUBLE-CHUNKED', suite: 'smuggling', description: 'Transfer-Encoding: chunked, chunked with CL is ambiguous', rfc: 'RFC 9112 §6.1', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked, chunked\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-CL-EXTRA-LEADING-SP', suite: 'smuggling', description: 'Content-Length with extra leading whitespace (double space OWS)', rfc: 'RFC 9110 §5.5', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length:  5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-TE-CASE-MISMATCH', suite: 'smuggling', description: 'Transfer-Encoding: Chunked (capital C) with CL — case-insensitive is valid', rfc: 'RFC 9112 §6.1', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: Chunked\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-CL-COMMA-DIFFERENT', suite: 'smuggling', description: 'Content-Length with comma-separated different values must be rejected', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5, 10\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-TE-NOT-FINAL-CHUNKED', suite: 'smuggling', description: 'Transfer-Encoding where chunked is not final — server MUST respond with 400 (RFC 9112 §6.3)', rfc: 'RFC 9112 §6.3', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-TE-HTTP10', suite: 'smuggling', description: 'Transfer-Encoding in HTTP/1.0 request must be rejected', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.0\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-BARE-SEMICOLON', suite: 'smuggling', description: 'Chunk size with bare semicolon and no extension name must be rejected', rfc: 'RFC 9112 §7.1.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5;\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-EXT-INVALID-TOKEN', suite: 'smuggling', description: 'Chunk extension with invalid token character must be rejected', rfc: 'RFC 9112 §7.1.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5;bad[=x\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-BARE-CR-HEADER-VALUE', suite: 'smuggling', description: 'Bare CR in header value must be rejected or replaced with SP', rfc: 'RFC 9112 §2.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nX-Test: val\rue\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-CL-OCTAL', suite: 'smuggling', description: 'Content-Length with octal prefix (0o5) must be rejected', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0o5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-UNDERSCORE', suite: 'smuggling', description: 'Chunk size with underscores (1_0) must be rejected', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n1_0\r\nhello world!!!!!\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-TE-EMPTY-VALUE', suite: 'smuggling', description: 'Transfer-Encoding with empty value must be rejected', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: \r\nContent-Length: 5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-TE-LEADING-COMMA', suite: 'smuggling', description: 'Transfer-Encoding with leading comma (, chunked) — RFC says empty list elements MUST be ignored', rfc: 'RFC 9110 §5.6.1', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: , chunked\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-TE-DUPLICATE-HEADERS', suite: 'smuggling', description: 'Two Transfer-Encoding headers with CL present — ambiguous framing', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-HEX-PREFIX', suite: 'smuggling', description: 'Chunk size with 0x prefix must be rejected', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-SIZE-PLUS', suite: 'smuggling', description: 'Chunk size with leading plus sign must be rejected', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-SIZE-TRAILING-OWS', suite: 'smuggling', description: 'Chunk size with trailing whitespace before CRLF must be rejected', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CL-HEX-PREFIX', suite: 'smuggling', description: 'Content-Length with hex prefix (0x5) must be rejected', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0x5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-CL-INTERNAL-SPACE', suite: 'smuggling', description: 'Content-Length with internal space (1 0) must be rejected', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 1 0\r\n\r\nhello12345', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-LEADING-SP', suite: 'smuggling', description: 'Chunk size with leading space must be rejected', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-MISSING-TRAILING-CRLF', suite: 'smuggling', description: 'Chunk data without trailing CRLF must be rejected', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-EXT-LF', suite: 'smuggling', description: 'Bare LF in chunk extension — server MAY accept bare LF per RFC 9112 §2.2', rfc: 'RFC 9112 §7.1.1', level: 'may', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5;\nhello\r\n0\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-CHUNK-SPILL', suite: 'smuggling', description: 'Chunk declares size 5 but sends 7 bytes — oversized chunk data must be rejected', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello!!\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-LF-TERM', suite: 'smuggling', description: 'Bare LF as chunk data terminator — server MAY accept bare LF per RFC 9112 §2.2', rfc: 'RFC 9112 §7.1', level: 'may', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-CHUNK-EXT-CTRL', suite: 'smuggling', description: 'NUL byte in chunk extension must be rejected', rfc: 'RFC 9112 §7.1.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5;\x00ext\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-EXT-CR', suite: 'smuggling', description: 'Bare CR (not CRLF) in chunk extension — some parsers treat CR alone as line ending', rfc: 'RFC 9112 §7.1.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5;a\rX\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-TE-VTAB', suite: 'smuggling', description: "Vertical tab before 'chunked' in TE value — control char obfuscation vector", rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: \x0bchunked\r\nContent-Length: 5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-TE-FORMFEED', suite: 'smuggling', description: "Form feed before 'chunked' in TE value — control char obfuscation vector", rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: \x0cchunked\r\nContent-Length: 5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-TE-NULL', suite: 'smuggling', description: "NUL byte appended to 'chunked' in TE value — C-string truncation attack", rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\x00\r\nContent-Length: 5\r\n\r\nhello', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-LF-TRAILER', suite: 'smuggling', description: 'Bare LF in chunked trailer termination — server MAY accept bare LF per RFC 9112 §2.2', rfc: 'RFC 9112 §7.1', level: 'may', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-TE-IDENTITY', suite: 'smuggling', description: 'Transfer-Encoding: identity (deprecated) with CL must be rejected', rfc: 'RFC 9112 §7', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400or501() },
  { id: 'SMUG-CHUNK-NEGATIVE', suite: 'smuggling', description: 'Negative chunk size must be rejected', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-TRANSFER_ENCODING', suite: 'smuggling', description: 'Transfer_Encoding (underscore) header with CL — not a valid header but some parsers accept', rfc: 'RFC 9112 §6.1', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer_Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-CL-COMMA-SAME', suite: 'smuggling', description: 'Content-Length with comma-separated identical values — some servers merge', rfc: 'RFC 9110 §8.6', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5, 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-CL-COMMA-TRIPLE', suite: 'smuggling', description: 'Content-Length with three comma-separated identical values — extended merge test', rfc: 'RFC 9110 §8.6', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5, 5, 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-CHUNKED-WITH-PARAMS', suite: 'smuggling', description: 'Transfer-Encoding: chunked;ext=val — parameters on chunked encoding', rfc: 'RFC 9112 §7', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked;ext=val\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-EXPECT-100-CL', suite: 'smuggling', description: 'Expect: 100-continue with Content-Length — server should send 100 then read body', rfc: 'RFC 9110 §10.1.1', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-TRAILER-CL', suite: 'smuggling', description: 'Content-Length in chunked trailers must be ignored — prohibited trailer field', rfc: 'RFC 9110 §6.5.1', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-TRAILER-TE', suite: 'smuggling', description: 'Transfer-Encoding in chunked trailers must be ignored — prohibited trailer field', rfc: 'RFC 9110 §6.5.1', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-TRAILER-HOST', suite: 'smuggling', description: 'Host header in chunked trailers must not be used for routing', rfc: 'RFC 9110 §6.5.2', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nHost: evil.example.com\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-TRAILER-AUTH', suite: 'smuggling', description: 'Authorization header in chunked trailers — prohibited per RFC 9110 §6.5.1', rfc: 'RFC 9110 §6.5.1', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nAuthorization: Bearer evil\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-HEAD-CL-BODY', suite: 'smuggling', description: 'HEAD request with Content-Length and body — server must not leave body on connection', rfc: 'RFC 9110 §9.3.2', level: 'must', scored: false,
    request: 'HEAD / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-OPTIONS-CL-BODY', suite: 'smuggling', description: 'OPTIONS with Content-Length and body — server should consume or reject body', rfc: 'RFC 9110 §9.3.7', level: 'must', scored: false,
    request: 'OPTIONS / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 405 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'SMUG-CL-UNDERSCORE', suite: 'smuggling', description: 'Content-Length with underscore digit separator (1_0) must be rejected', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 1_0\r\n\r\nhelloworld', verdict: exactOrClose(400) },
  { id: 'SMUG-CL-NEGATIVE-ZERO', suite: 'smuggling', description: 'Content-Length: -0 must be rejected — not valid 1*DIGIT', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: -0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CL-DOUBLE-ZERO', suite: 'smuggling', description: 'Content-Length: 00 — matches 1*DIGIT but leading zero ambiguity', rfc: 'RFC 9110 §8.6', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 00\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-CL-LEADING-ZEROS-OCTAL', suite: 'smuggling', description: 'Content-Length: 0200 — octal 128 vs decimal 200, parser disagreement vector', rfc: 'RFC 9110 §8.6', level: 'should', scored: true,
    repeat: { marker: '{big}', text: 'A', times: 200 },
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0200\r\n\r\n{big}', verdict: reject400Warn2xx() },
  { id: 'SMUG-TE-OBS-FOLD', suite: 'smuggling', description: 'Transfer-Encoding with obs-fold line wrapping must be rejected', rfc: 'RFC 9112 §5.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 5\r\n\r\nhello',
    verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: [200, 299], closed: true }, 'warn']] },
  { id: 'SMUG-TE-TRAILING-COMMA', suite: 'smuggling', description: 'Transfer-Encoding: chunked, — trailing comma produces empty list element', rfc: 'RFC 9110 §5.6.1', level: 'should', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked,\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-TE-TAB-BEFORE-VALUE', suite: 'smuggling', description: 'Transfer-Encoding with tab as OWS before value', rfc: 'RFC 9110 §5.5', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding:\tchunked\r\nContent-Length: 5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'SMUG-ABSOLUTE-URI-HOST-MISMATCH', suite: 'smuggling', description: 'Absolute-form URI with different Host header — routing confusion vector', rfc: 'RFC 9112 §3.2.2', level: 'must', scored: false,
    request: 'GET http://other.example.com/ HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: reject400Warn2xx() },
  { id: 'SMUG-MULTIPLE-HOST-COMMA', suite: 'smuggling', description: 'Host header with comma-separated values must be rejected', rfc: 'RFC 9110 §7.2', level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}, other.example.com\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-CHUNK-BARE-CR-TERM', suite: 'smuggling', description: 'Chunk size line terminated by bare CR — not a valid line terminator', rfc: 'RFC 9112 §2.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'SMUG-TRAILER-CONTENT-TYPE', suite: 'smuggling', description: 'Content-Type in chunked trailer — prohibited per RFC 9110 §6.5.1', rfc: 'RFC 9110 §6.5.1', level: 'must', scored: false,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nContent-Type: text/evil\r\n\r\n', verdict: reject400Warn2xx() },

  // ───────────────────────────── SmugglingSuite.cs (GetSequenceTestCases) ─────────────────────────────
  { id: 'SMUG-CLTE-CONN-CLOSE', suite: 'smuggling', description: 'CL+TE conflict — server MUST close connection after responding', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    steps: [{ send: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', awaitResponse: true }, { send: GET }],
    verdict: rejectOrCloseAfterFirst() },
  { id: 'SMUG-TECL-CONN-CLOSE', suite: 'smuggling', description: 'TE+CL conflict (reversed order) — server MUST close connection after responding', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    steps: [{ send: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n', awaitResponse: true }, { send: GET }],
    verdict: rejectOrCloseAfterFirst() },
  { id: 'SMUG-CLTE-DESYNC', suite: 'smuggling', description: 'CL.TE desync — leftover bytes after the body boundary may be interpreted as the next request', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    steps: [{ send: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nX', awaitResponse: true }, { send: GET }],
    verdict: rejectOrCloseAfterFirst() },
  { id: 'SMUG-CLTE-SMUGGLED-GET', suite: 'smuggling', description: 'CL.TE desync — embedded GET in body; multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len:b}\r\nTransfer-Encoding: chunked\r\n\r\n{begin:b}0\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-CLTE-SMUGGLED-GET-CL-PLUS', suite: 'smuggling', description: 'CL.TE desync with malformed Content-Length (+N) — multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: +{len:b}\r\nTransfer-Encoding: chunked\r\n\r\n{begin:b}0\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-CLTE-SMUGGLED-GET-CL-NON-NUMERIC', suite: 'smuggling', description: 'CL.TE desync with non-numeric Content-Length (N<alpha>) — multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len:b}x\r\nTransfer-Encoding: chunked\r\n\r\n{begin:b}0\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-CLTE-SMUGGLED-GET-TE-OBS-FOLD', suite: 'smuggling', description: 'CL.TE desync with obs-folded Transfer-Encoding — multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §5.2', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: {len:b}\r\n\r\n{begin:b}0\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-CLTE-SMUGGLED-HEAD', suite: 'smuggling', description: 'CL.TE desync — embedded HEAD in body; multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len:b}\r\nTransfer-Encoding: chunked\r\n\r\n{begin:b}0\r\n\r\nHEAD / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-CLTE-SMUGGLED-GET-TE-TRAILING-SPACE', suite: 'smuggling', description: 'CL.TE desync with TE trailing space — multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len:b}\r\nTransfer-Encoding: chunked \r\n\r\n{begin:b}0\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-CLTE-SMUGGLED-GET-TE-LEADING-COMMA', suite: 'smuggling', description: 'CL.TE desync with TE leading comma — multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len:b}\r\nTransfer-Encoding: , chunked\r\n\r\n{begin:b}0\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-CLTE-SMUGGLED-GET-TE-CASE-MISMATCH', suite: 'smuggling', description: 'CL.TE desync with TE case mismatch — multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len:b}\r\nTransfer-Encoding: Chunked\r\n\r\n{begin:b}0\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-TE-DUPLICATE-HEADERS-SMUGGLED-GET', suite: 'smuggling', description: 'TE.TE + CL ambiguity with embedded GET — multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\nContent-Length: {len:b}\r\n\r\n{begin:b}0\r\n\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-TECL-SMUGGLED-GET', suite: 'smuggling', description: 'TE.CL desync via chunk-size prefix trick — multiple responses indicate request boundary confusion', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    // CL covers only the "<hex chunk size>\r\n" line; the chunk data is a complete GET (with a 7-byte body that
    // swallows the trailing "\r\n0\r\n\r\n" if it is parsed as a second request).
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nContent-Length: {len:p}\r\n\r\n{begin:p}{hexlen:s}\r\n{end:p}{begin:s}GET / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 7\r\n\r\n{end:s}\r\n0\r\n\r\n',
    verdict: smuggledGet() },
  { id: 'SMUG-DUPLICATE-CL-SMUGGLED-GET', suite: 'smuggling', description: 'CL.CL ambiguity with embedded GET — multiple responses indicate request boundary confusion', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 4\r\nContent-Length: {len:b}\r\n\r\n{begin:b}PINGGET / HTTP/1.1\r\nHost: {host}\r\n\r\n{end:b}',
    verdict: smuggledGet() },
  { id: 'SMUG-GET-CL-PREFIX-DESYNC', suite: 'smuggling', description: 'GET with Content-Length body containing an incomplete request prefix — follow-up completes it if body was left unread', rfc: 'RFC 9110 §9.3.1', level: 'may', scored: false,
    steps: [
      { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len:b}\r\n\r\n{begin:b}GET / HTTP/1.1\r\nHost: {host}\r\n{end:b}', awaitResponse: true },
      { send: '\r\nGET / HTTP/1.1\r\nHost: {host}\r\n\r\n' },
    ],
    verdict: [[{ status: 400 }, 'pass'], [{ stepsSent: 1, closed: true }, 'pass'],
      [{ status: [200, 299], responsesAtLeast: 3 }, 'warn'],
      [{ status: [200, 299], nth: { index: 1, status: 400 } }, 'pass'],
      [{ status: [200, 299], nth: { index: 1, status: [200, 299] } }, 'pass'],
      [{}, 'warn']] },
  { id: 'SMUG-TECL-DESYNC', suite: 'smuggling', description: 'TE.CL desync — chunked terminator before CL boundary, leftover bytes smuggled', rfc: 'RFC 9112 §6.1', level: 'must', scored: true,
    steps: [{ send: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nContent-Length: 30\r\n\r\n0\r\n\r\nX', awaitResponse: true }, { send: GET }],
    verdict: rejectOrCloseAfterFirst() },
  { id: 'SMUG-CL0-BODY-POISON', suite: 'smuggling', description: 'Content-Length: 0 with trailing bytes — checks if leftover bytes poison the next request', rfc: 'RFC 9112 §6.2', level: 'notApplicable', scored: false,
    steps: [{ send: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\nX', awaitResponse: true }, { send: GET }],
    verdict: [[{ status: 400 }, 'pass'], [{ stepsSent: 1, closed: true }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'SMUG-GET-CL-BODY-DESYNC', suite: 'smuggling', description: 'GET with Content-Length body followed by a second request — detects unread-body desync', rfc: 'RFC 9110 §9.3.1', level: 'may', scored: false,
    steps: [{ send: 'GET / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello', awaitResponse: true }, { send: GET }],
    verdict: bodyDesync() },
  { id: 'SMUG-OPTIONS-CL-BODY-DESYNC', suite: 'smuggling', description: 'OPTIONS with Content-Length body followed by a second request — detects unread-body desync', rfc: 'RFC 9110 §9.3.7', level: 'notApplicable', scored: false,
    steps: [{ send: 'OPTIONS / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello', awaitResponse: true }, { send: GET }],
    verdict: bodyDesync(405) },
  { id: 'SMUG-EXPECT-100-CL-DESYNC', suite: 'smuggling', description: 'Expect: 100-continue with immediate body followed by a second request — detects unread-body desync', rfc: 'RFC 9110 §10.1.1', level: 'notApplicable', scored: false,
    steps: [{ send: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello', awaitResponse: true }, { send: GET }],
    verdict: [[{ status: 400 }, 'pass'], [{ status: 417 }, 'pass'], [{ stepsSent: 1, closed: true }, 'pass'],
      [{ status: [200, 299], nth: { index: 1, status: 400 } }, 'warn'],
      [{ status: [200, 299], nth: { index: 1, status: [200, 299] } }, 'pass'],
      [{}, 'warn']] },
  { id: 'SMUG-OPTIONS-TE-OBS-FOLD', suite: 'smuggling', description: 'OPTIONS with TE obs-fold and CL present — server must reject or close after response', rfc: 'RFC 9112 §5.2', level: 'must', scored: true,
    steps: [{ send: 'OPTIONS / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 5\r\n\r\nhello', awaitResponse: true }, { send: GET }],
    verdict: rejectOrCloseAfterFirst(405) },
  { id: 'SMUG-CHUNK-INVALID-SIZE-DESYNC', suite: 'smuggling', description: 'Invalid chunk size (+0) with poison byte — detects chunk-size parser desync', rfc: 'RFC 9112 §7.1', level: 'must', scored: true,
    steps: [{ send: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n+0\r\n\r\nX', awaitResponse: true }, { send: GET }],
    verdict: rejectOrCloseAfterFirst() },
  { id: 'SMUG-PIPELINE-SAFE', suite: 'smuggling', description: 'Baseline — two clean GET requests on one keep-alive connection', rfc: 'RFC 9112 §9.3', level: 'should', scored: false,
    steps: [{ send: GET, awaitResponse: true }, { send: GET }],
    verdict: [[{ status: [200, 299], nth: { index: 1, status: [200, 299] } }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  // ───────────────────────────── MalformedInputSuite.cs ─────────────────────────────
  { id: 'MAL-BINARY-GARBAGE', suite: 'malformed', description: 'Random binary garbage should be rejected or connection closed', rfc: null, level: 'should', scored: true,
    // The 256 bytes .NET's new Random(42).NextBytes() yields (legacy seeded generator), as Http11Probe sends them.
    request: '\x3e\x17\xba\x96\xae\x04\xcd\x3b\x99\x86\x9e\x56\xf0\xad\xbf\x3a\x6f\xb7\x4d\x25\x55\x17\x5d\xcc\x6e\x8b\x09\x14\x57\x9a\xb0\x36\xcf\xd6\x28\x0b\xb3\xc7\x07\xdb\xae\xf2\x70\xdc\x95\x05\x09\x6e\x67\x6b\xe7\xf1\x0d\x46\xd8\x27\xba\xed\x27\x22\xfb\xb9\xe4\xfe\xd6\x67\x87\x1a\x85\xb3\x86\xa8\xaf\x72\x76\x63\xa7\x81\x37\x69\x81\x9a\xad\xeb\xb3\xbf\x29\x89\xfd\x00\x51\xc6\x9f\xe4\xe0\xf5\x0e\x71\x05\x2d\x7e\xef\xe9\xb3\xe5\x3e\x42\x9b\xcf\x75\x80\x38\xb5\xbe\xa0\x60\x0b\xf8\x4a\x17\x3e\xfd\x1d\x84\x62\xc0\x09\xca\x91\x81\x54\x35\x7b\x0a\xea\x92\xb1\xfa\x06\x74\x7c\x8e\xb9\x87\x80\x18\x10\xe0\x44\x80\xea\x15\x27\xee\xee\x80\xd2\x64\x51\x25\x35\x77\x09\x4e\x20\x4b\xbd\xab\xd4\x0d\xae\x11\xf2\xd5\x9a\xb0\x44\x95\x03\x49\xaf\x28\x86\x11\x96\x3f\x0d\x8c\x1b\x69\xc0\x4c\xa8\xe0\x3f\x05\x84\x6b\x67\x34\x5a\x65\x0c\x36\xd1\xd8\x22\x51\x54\x3e\x3c\x3c\x60\x07\x75\x0c\xf1\xf8\xb7\xe0\x3d\x31\x90\x6a\x4d\x61\x68\x12\x96\x94\x2b\xd8\x2d\xcf\xef\x4a\x1c\x50\x3f\xbe\x1d\xbc\x37\xdc\x2c\x83\xeb\xa1\x6a\x32\x14\x8b\xb4\x86\xf7\x28',
    verdict: only400OrSilence() },
  { id: 'MAL-LONG-URL', suite: 'malformed', description: '100KB URL should be rejected with 414 URI Too Long', rfc: null, level: 'should', scored: true,
    repeat: { marker: '{big}', text: 'A', times: 100000 },
    request: 'GET /{big} HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 414 }, 'pass'], [{ status: 431 }, 'pass']] },
  { id: 'MAL-LONG-HEADER-VALUE', suite: 'malformed', description: '100KB header value should be rejected with 431', rfc: null, level: 'should', scored: true,
    repeat: { marker: '{big}', text: 'B', times: 100000 },
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nX-Big: {big}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 431 }, 'pass']] },
  { id: 'MAL-MANY-HEADERS', suite: 'malformed', description: '10,000 headers should be rejected with 431', rfc: null, level: 'notApplicable', scored: true,
    repeat: { marker: '{big}', text: 'X-H-{i}: value\r\n', times: 10000 },
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\n{big}\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 431 }, 'pass']] },
  { id: 'MAL-NUL-IN-URL', suite: 'malformed', description: 'NUL byte in URL should be rejected', rfc: null, level: 'must', scored: true,
    request: 'GET /\x00test HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-CONTROL-CHARS-HEADER', suite: 'malformed', description: 'Control characters in header value should be rejected', rfc: null, level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nX-Test: abc\x07\x08\x0bdef\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-INCOMPLETE-REQUEST', suite: 'malformed', description: 'Partial HTTP request — request-line and headers but no final CRLF', rfc: null, level: 'notApplicable', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nX-Test: value', verdict: only400OrSilence() },
  { id: 'MAL-EMPTY-REQUEST', suite: 'malformed', description: 'Zero bytes — TCP connection established without sending any data', rfc: null, level: 'notApplicable', scored: true,
    request: '', verdict: only400OrSilence() },
  { id: 'MAL-LONG-HEADER-NAME', suite: 'malformed', description: '100KB header name should be rejected with 400/431', rfc: null, level: 'should', scored: true,
    repeat: { marker: '{big}', text: 'A', times: 100000 },
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\n{big}: val\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 431 }, 'pass']] },
  { id: 'MAL-LONG-METHOD', suite: 'malformed', description: '100KB method name should be rejected', rfc: null, level: 'should', scored: true,
    repeat: { marker: '{big}', text: 'A', times: 100000 },
    request: '{big} / HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass']] },
  { id: 'MAL-NON-ASCII-HEADER-NAME', suite: 'malformed', description: 'Non-ASCII bytes (UTF-8 ë) in header name must be rejected', rfc: null, level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nX-T\xc3\xabst: value\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-NON-ASCII-URL', suite: 'malformed', description: 'Non-ASCII bytes (UTF-8 é) in URL must be rejected', rfc: null, level: 'must', scored: true,
    request: 'GET /caf\xc3\xa9 HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-CL-OVERFLOW', suite: 'malformed', description: 'Content-Length with integer overflow value must be rejected', rfc: null, level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 99999999999999999999\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-WHITESPACE-ONLY-LINE', suite: 'malformed', description: 'Whitespace-only request line should be rejected or timeout', rfc: null, level: 'notApplicable', scored: true,
    request: '   \r\n\r\n', verdict: only400OrSilence() },
  { id: 'MAL-NUL-IN-HEADER-VALUE', suite: 'malformed', description: 'NUL byte in header value should be rejected', rfc: null, level: 'must', scored: true,
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nX-Test: val\x00ue\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-CHUNK-SIZE-OVERFLOW', suite: 'malformed', description: 'Chunk size with integer overflow must be rejected', rfc: null, level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF0\r\nhello\r\n0\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-H2-PREFACE', suite: 'malformed', description: 'HTTP/2 connection preface sent to HTTP/1.1 server must be rejected', rfc: null, level: 'notApplicable', scored: true,
    request: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', verdict: [[{ status: 400 }, 'pass'], [{ status: 505 }, 'pass'], CLOSED_PASS, TIMEOUT_PASS] },
  { id: 'MAL-CL-EMPTY', suite: 'malformed', description: 'Empty Content-Length value must be rejected', rfc: 'RFC 9110 §8.6', level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: \r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-CL-TAB-BEFORE-VALUE', suite: 'malformed', description: 'Content-Length with tab as OWS — valid per RFC but unusual', rfc: 'RFC 9110 §5.5', level: 'may', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length:\t5\r\n\r\nhello', verdict: reject400Warn2xx() },
  { id: 'MAL-URL-BACKSLASH', suite: 'malformed', description: 'Backslash in URL path — not valid URI character, some servers normalize to /', rfc: null, level: 'should', scored: true,
    request: 'GET /path\\file HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: [200, 499] }, 'warn']] },
  { id: 'MAL-URL-OVERLONG-UTF8', suite: 'malformed', description: 'Overlong UTF-8 encoding of / (0xC0 0xAF) in URL must be rejected', rfc: null, level: 'must', scored: true,
    request: 'GET /\xc0\xaf HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: exactOrClose(400) },
  { id: 'MAL-URL-PERCENT-NULL', suite: 'malformed', description: 'Percent-encoded NUL byte (%00) in URL — security risk from null byte injection', rfc: null, level: 'notApplicable', scored: true,
    request: 'GET /path%00.html HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: [200, 499] }, 'warn']] },
  { id: 'MAL-URL-PERCENT-CRLF', suite: 'malformed', description: 'Percent-encoded CRLF (%0d%0a) in URL — header injection if server decodes during parsing', rfc: null, level: 'notApplicable', scored: true,
    request: 'GET /path%0d%0aX-Injected:%20true HTTP/1.1\r\nHost: {host}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: [200, 499] }, 'warn']] },
  { id: 'MAL-CHUNK-EXT-64K', suite: 'malformed', description: '64KB chunk extension — tests extension length limits (CVE-2023-39326 class)', rfc: null, level: 'notApplicable', scored: true,
    repeat: { marker: '{big}', text: 'a', times: 65536 },
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5;ext={big}\r\nhello\r\n0\r\n\r\n',
    verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 431 }, 'pass'], [{ status: [200, 299] }, 'warn']] },
  { id: 'MAL-RANGE-OVERLAPPING', suite: 'malformed', description: '1000 overlapping Range values — resource exhaustion vector (CVE-2011-3192 class)', rfc: null, level: 'notApplicable', scored: false,
    repeat: { marker: '{big}', text: '0-', times: 1000, join: ',' },
    request: 'GET / HTTP/1.1\r\nHost: {host}\r\nRange: bytes={big}\r\n\r\n',
    verdict: [CLOSED_PASS, [{ status: 200 }, 'warn'], [{ status: 206 }, 'warn'], [{ status: 400 }, 'warn'], [{ status: 416 }, 'warn'], [{ status: 431 }, 'warn']] },
  { id: 'MAL-POST-CL-HUGE-NO-BODY', suite: 'malformed', description: 'POST with Content-Length: 999999999 but no body — tests timeout vs memory allocation', rfc: null, level: 'must', scored: true,
    request: 'POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 999999999\r\n\r\n', verdict: [[{ status: 400 }, 'pass'], [{ status: 413 }, 'pass'], CLOSED_PASS, TIMEOUT_PASS] },
  // ───────────────────────────── NormalizationSuite.cs (POST /echo: reject/drop = pass, normalize = fail, preserve = warn) ─────────────────────────────
  { id: 'NORM-UNDERSCORE-CL', suite: 'normalization', description: 'Underscore in Content-Length name — checks if server normalizes Content_Length to Content-Length', rfc: null, level: 'notApplicable', scored: true,
    request: 'POST /echo HTTP/1.1\r\nHost: {host}\r\nContent-Length: 11\r\nContent_Length: 99\r\n\r\nhello world', verdict: normalization('Content-Length', 'Content_Length', '99') },
  { id: 'NORM-SP-BEFORE-COLON-CL', suite: 'normalization', description: 'Space before colon in Content-Length — checks if server strips whitespace before colon', rfc: 'RFC 9112 §5', level: 'must', scored: true,
    request: 'POST /echo HTTP/1.1\r\nHost: {host}\r\nContent-Length: 11\r\nContent-Length : 5\r\n\r\nhello world', verdict: normalization('Content-Length', 'Content-Length ', '5') },
  { id: 'NORM-TAB-IN-NAME', suite: 'normalization', description: 'Tab character in header name — checks if server normalizes Content\\tLength to Content-Length', rfc: null, level: 'must', scored: true,
    request: 'POST /echo HTTP/1.1\r\nHost: {host}\r\nContent-Length: 11\r\nContent\tLength: 99\r\n\r\nhello world', verdict: normalization('Content-Length', 'Content\tLength', '99') },
  { id: 'NORM-CASE-TE', suite: 'normalization', description: 'All-uppercase TRANSFER-ENCODING — checks if server normalizes header name casing', rfc: null, level: 'notApplicable', scored: false,
    request: 'POST /echo HTTP/1.1\r\nHost: {host}\r\nTRANSFER-ENCODING: chunked\r\n\r\nB\r\nhello world\r\n0\r\n\r\n',
    verdict: [CLOSED_PASS, [{ status: [400, 999] }, 'pass'],
      [{ status: [200, 299], echoHeader: { name: 'TRANSFER-ENCODING', value: 'chunked', exact: true } }, 'warn'],
      [{ status: [200, 299], echoHeader: { name: 'Transfer-Encoding', value: 'chunked' } }, 'fail'],
      [{ status: [200, 299] }, 'pass']] },
  { id: 'NORM-UNDERSCORE-TE', suite: 'normalization', description: 'Underscore in Transfer-Encoding name — checks if server normalizes Transfer_Encoding to Transfer-Encoding', rfc: null, level: 'notApplicable', scored: true,
    request: 'POST /echo HTTP/1.1\r\nHost: {host}\r\nTransfer_Encoding: chunked\r\n\r\nB\r\nhello world\r\n0\r\n\r\n', verdict: normalization('Transfer-Encoding', 'Transfer_Encoding', 'chunked') },
  // ───────────────────────────── CookieSuite.cs (GET /echo echoes request headers; GET /cookie lists parsed cookies) ─────────────────────────────
  { id: 'COOK-ECHO', suite: 'cookie', description: 'Basic Cookie header echoed back by /echo endpoint', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /echo HTTP/1.1\r\nHost: {host}\r\nCookie: foo=bar\r\n\r\n', verdict: [CLOSED_WARN, [{ status: [200, 299], bodyMatches: { regex: 'cookie:', flags: 'i' } }, 'pass']] },
  { id: 'COOK-OVERSIZED', suite: 'cookie', description: '64KB Cookie header — tests header size limits on cookie data', rfc: null, level: 'notApplicable', scored: false,
    repeat: { marker: '{big}', text: 'A', times: 65536 },
    request: 'GET /echo HTTP/1.1\r\nHost: {host}\r\nCookie: big={big}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: 431 }, 'pass'], [{ status: [200, 299] }, 'pass']] },
  { id: 'COOK-EMPTY', suite: 'cookie', description: 'Empty Cookie header value — tests parser resilience', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /echo HTTP/1.1\r\nHost: {host}\r\nCookie: \r\n\r\n', verdict: [CLOSED_PASS, [{ status: [200, 299] }, 'pass'], [{ status: 400 }, 'pass']] },
  { id: 'COOK-NUL', suite: 'cookie', description: 'NUL byte in cookie value — dangerous if preserved by parser', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /echo HTTP/1.1\r\nHost: {host}\r\nCookie: foo=\x00bar\r\n\r\n',
    verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: [200, 299], bodyIncludes: '\x00' }, 'fail'], [{ status: [200, 299] }, 'pass']] },
  { id: 'COOK-CONTROL-CHARS', suite: 'cookie', description: 'Control characters (0x01-0x03) in cookie value — dangerous if preserved', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /echo HTTP/1.1\r\nHost: {host}\r\nCookie: foo=\x01\x02\x03\r\n\r\n',
    verdict: [CLOSED_PASS, [{ status: 400 }, 'pass'], [{ status: [200, 299], bodyMatches: { regex: '[\\x01-\\x03]' } }, 'fail'], [{ status: [200, 299] }, 'pass']] },
  { id: 'COOK-MANY-PAIRS', suite: 'cookie', description: '1000 cookie key=value pairs — tests parser performance limits', rfc: null, level: 'notApplicable', scored: false,
    repeat: { marker: '{big}', text: 'k{i}=v{i}', times: 1000, join: '; ' },
    request: 'GET /echo HTTP/1.1\r\nHost: {host}\r\nCookie: {big}\r\n\r\n', verdict: [CLOSED_PASS, [{ status: [200, 299] }, 'pass'], [{ status: 400 }, 'pass'], [{ status: 431 }, 'pass']] },
  { id: 'COOK-MALFORMED', suite: 'cookie', description: 'Completely malformed cookie value (===;;;) — tests parser crash resilience', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /echo HTTP/1.1\r\nHost: {host}\r\nCookie: ===;;;\r\n\r\n', verdict: [CLOSED_PASS, [{ status: [200, 299] }, 'pass'], [{ status: 400 }, 'pass']] },
  { id: 'COOK-MULTI-HEADER', suite: 'cookie', description: 'Two separate Cookie headers — should be folded per RFC 6265 §5.4', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /echo HTTP/1.1\r\nHost: {host}\r\nCookie: a=1\r\nCookie: b=2\r\n\r\n',
    verdict: [CLOSED_WARN, [{ status: [200, 299], bodyIncludes: ['a=1', 'b=2'] }, 'pass'], [{ status: [200, 299] }, 'warn'], [{ status: 400 }, 'warn']] },
  { id: 'COOK-PARSED-BASIC', suite: 'cookie', description: 'Basic cookie parsed correctly by framework', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /cookie HTTP/1.1\r\nHost: {host}\r\nCookie: foo=bar\r\n\r\n', verdict: parsedCookies(['foo=bar']) },
  { id: 'COOK-PARSED-MULTI', suite: 'cookie', description: 'Multiple cookies parsed correctly by framework', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /cookie HTTP/1.1\r\nHost: {host}\r\nCookie: a=1; b=2; c=3\r\n\r\n', verdict: parsedCookies(['a=1', 'b=2', 'c=3']) },
  { id: 'COOK-PARSED-EMPTY-VAL', suite: 'cookie', description: 'Cookie with empty value parsed without crash', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /cookie HTTP/1.1\r\nHost: {host}\r\nCookie: foo=\r\n\r\n', verdict: parsedNoCrash() },
  { id: 'COOK-PARSED-SPECIAL', suite: 'cookie', description: 'Cookies with spaces and = in values — tests framework parser edge cases', rfc: null, level: 'notApplicable', scored: false,
    request: 'GET /cookie HTTP/1.1\r\nHost: {host}\r\nCookie: a=hello world; b=x=y\r\n\r\n', verdict: parsedNoCrash() },
  // ───────────────────────────── CapabilitiesSuite.cs (sequences; Http11Probe's Error verdicts map to 'fail') ─────────────────────────────
  { id: 'CAP-ETAG-304', suite: 'capabilities', description: 'ETag conditional GET returns 304 Not Modified', rfc: 'RFC 9110 §13.1.2', level: 'should', scored: false,
    captures: { '{etag}': { response: 0, header: 'ETag', fallback: '"no-etag"' } },
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true }, { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-None-Match: {etag}\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ header: { name: 'ETag', present: false } }, 'warn'], [{ responses: 1 }, 'warn'],
      [{ nth: { index: 1, status: 304 } }, 'pass'], [{ nth: { index: 1, status: [200, 299] } }, 'warn']] },
  { id: 'CAP-LAST-MODIFIED-304', suite: 'capabilities', description: 'Last-Modified conditional GET returns 304 Not Modified', rfc: 'RFC 9110 §13.1.3', level: 'should', scored: false,
    captures: { '{lm}': { response: 0, header: 'Last-Modified', fallback: 'Thu, 01 Jan 2099 00:00:00 GMT' } },
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true }, { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-Modified-Since: {lm}\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ header: { name: 'Last-Modified', present: false } }, 'warn'], [{ responses: 1 }, 'warn'],
      [{ nth: { index: 1, status: 304 } }, 'pass'], [{ nth: { index: 1, status: [200, 299] } }, 'warn']] },
  { id: 'CAP-ETAG-IN-304', suite: 'capabilities', description: '304 response includes ETag header', rfc: 'RFC 9110 §15.4.5', level: 'should', scored: false,
    captures: { '{etag}': { response: 0, header: 'ETag', fallback: '"no-etag"' } },
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true }, { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-None-Match: {etag}\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ header: { name: 'ETag', present: false } }, 'warn'],
      [{ nth: { index: 1, status: 304, header: { name: 'ETag', present: true } } }, 'pass'], [{}, 'warn']] },
  { id: 'CAP-INM-PRECEDENCE', suite: 'capabilities', description: 'If-None-Match takes precedence over If-Modified-Since', rfc: 'RFC 9110 §13.1.2', level: 'should', scored: false,
    captures: { '{etag}': { response: 0, header: 'ETag', fallback: '"no-etag"' } },
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true },
      { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-None-Match: {etag}\r\nIf-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ header: { name: 'ETag', present: false } }, 'warn'], [{ responses: 1 }, 'warn'],
      [{ nth: { index: 1, status: 304 } }, 'pass'], [{ nth: { index: 1, status: [200, 299] } }, 'warn']] },
  { id: 'CAP-INM-WILDCARD', suite: 'capabilities', description: 'If-None-Match: * on existing resource returns 304', rfc: 'RFC 9110 §13.1.2', level: 'should', scored: false,
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true }, { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-None-Match: *\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ responses: 1 }, 'warn'], [{ nth: { index: 1, status: 304 } }, 'pass'], [{ nth: { index: 1, status: [200, 299] } }, 'warn']] },
  { id: 'CAP-IMS-FUTURE', suite: 'capabilities', description: 'If-Modified-Since with future date ignored', rfc: 'RFC 9110 §13.1.3', level: 'should', scored: false,
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true }, { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ responses: 1 }, 'warn'], [{ nth: { index: 1, status: [200, 299] } }, 'pass'], [{ nth: { index: 1, status: 304 } }, 'warn']] },
  { id: 'CAP-IMS-INVALID', suite: 'capabilities', description: 'If-Modified-Since with garbage date ignored', rfc: 'RFC 9110 §13.1.3', level: 'should', scored: false,
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true }, { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-Modified-Since: not-a-date\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ responses: 1 }, 'warn'], [{ nth: { index: 1, status: [200, 299] } }, 'pass'], [{ nth: { index: 1, status: 304 } }, 'warn']] },
  { id: 'CAP-INM-UNQUOTED', suite: 'capabilities', description: 'If-None-Match with unquoted ETag', rfc: 'RFC 9110 §8.8.3', level: 'should', scored: false,
    captures: { '{etag}': { response: 0, header: 'ETag', fallback: 'no-etag', transform: 'unquote' } },
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true }, { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-None-Match: {etag}\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ header: { name: 'ETag', present: false } }, 'warn'], [{ responses: 1 }, 'warn'],
      [{ nth: { index: 1, status: [200, 299] } }, 'pass'], [{ nth: { index: 1, status: 304 } }, 'warn']] },
  { id: 'CAP-ETAG-WEAK', suite: 'capabilities', description: 'Weak ETag comparison for GET', rfc: 'RFC 9110 §13.1.2', level: 'should', scored: false,
    captures: { '{etag}': { response: 0, header: 'ETag', fallback: 'W/"no-etag"', transform: 'weak' } },
    steps: [{ send: GET_KEEPALIVE, awaitResponse: true }, { send: 'GET / HTTP/1.1\r\nHost: {host}\r\nIf-None-Match: {etag}\r\n\r\n' }],
    verdict: [...CAP_ERRORS, [{ header: { name: 'ETag', present: false } }, 'warn'], [{ responses: 1 }, 'warn'],
      [{ nth: { index: 1, status: 304 } }, 'pass'], [{ nth: { index: 1, status: [200, 299] } }, 'warn']] },
]
