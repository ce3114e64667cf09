#!/usr/bin/env python3
"""Writes the seed corpus (fuzz/corpus/<target>/seed-*): valid and near-valid inputs for each door of
crates/gust-core/src/fuzzing/, laid out as each door reads its bytes. Run once when a door's layout changes;
inputs the fuzzer finds and regressions go beside them."""
import os, struct, zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')


def write(target, items):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    for i, data in enumerate(items):
        with open(os.path.join(d, f'seed-{i:02d}'), 'wb') as f:
            f.write(data)


def frame(fin, opcode, payload, mask=b'\x01\x02\x03\x04', rsv1=False, form=None):
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    n = len(payload)
    form = form or ('short' if n < 126 else 'u16' if n < 65536 else 'u64')
    head = bytes([first])
    if form == 'short':
        head += bytes([0x80 | n])
    elif form == 'u16':
        head += bytes([0x80 | 126]) + struct.pack('>H', n)
    else:
        head += bytes([0x80 | 127]) + struct.pack('>Q', n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def deflated(data):
    c = zlib.compressobj(1, zlib.DEFLATED, -15)
    out = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b'\x00\x00\xff\xff')
    return out[:-4]


hello = 'héllo wörld '.encode() * 4
write('ws_frames', [
    b'\x00' + frame(True, 1, b'hello'),
    b'\x08' + frame(False, 1, hello[:7]) + frame(True, 0, hello[7:]),
    b'\x04' + frame(True, 9, b'ping') + frame(True, 10, b'') + frame(True, 2, bytes(range(200))),
    b'\x0c' + frame(True, 8, struct.pack('>H', 1000) + b'bye'),
    b'\x01' + frame(True, 1, deflated(hello), rsv1=True),
    b'\x03' + frame(True, 2, deflated(b'a' * 300), rsv1=True) + frame(True, 2, deflated(b'a' * 300), rsv1=True),
    b'\x05' + frame(False, 1, deflated(hello)[:5], rsv1=True) + frame(True, 0, deflated(hello)[5:]),
    b'\x08' + frame(True, 2, b'x' * 10, form='u16') + frame(True, 2, b'y' * 3, form='u64'),
    b'\xf8' + frame(True, 2, b'z' * 70000),
])

write('ws_deflate', [b'\x07' + hello, b'\x0f' + hello + b'\x00' + hello + b'\x00{"a":1}', b'\x27' + deflated(hello),
                     b'\x30' + deflated(b'\x00' * 100000), b'\x09' + bytes(range(256))])

write('ws_extension', [b'\x00permessage-deflate; client_max_window_bits',
                       b'\x01permessage-deflate; server_no_context_takeover; client_no_context_takeover',
                       b'\x03permessage-deflate; server_max_window_bits=10; client_max_window_bits=12, permessage-deflate',
                       b'\x02x-webkit-deflate-frame\npermessage-deflate; client_max_window_bits="15"',
                       b'\x00permessage-deflate; server_max_window_bits=8'])


def tag(kind, flags=0):
    return kind | 2 << 8 | flags << 16


def batch(records, text, binaries=(), utf16=False):
    meta = b''.join(struct.pack('<I', w) for w in records)
    head = bytes([len(binaries) | (4 if utf16 else 0)])
    for b in binaries:
        head += bytes([len(b)]) + b
    return head + bytes([len(records)]) + meta + text


ct = ('content-type', 'text/plain')
write('answer_batch', [
    batch([tag(2), 1, 200, 1, 2, 12, 10], b'content-typetext/plainHi'),
    batch([tag(2, 2), 7, 200, 0, 3, tag(5), 7, 4, tag(5, 2), 7, 0, tag(6, 1), 9, 0], b'abcdefg'),
    batch([tag(2, 1), 3, 404, 1, 4, 1, 1, tag(5, 1 | 4), 3, 2], b'xy', [b'\x00\xff\x10\x20', b'\x01\x02']),
    batch([tag(2), 2, 200, 0, 3], 'hé!'.encode('utf-16-le'), utf16=True),
    batch([tag(2, 8), 4, 101, 1, 0, 22, 5], b'sec-websocket-protocolchat1'),
])

def rng(length, header):
    return struct.pack('<Q', length) + header

write('range', [rng(1000, b'bytes=0-99'), rng(1000, b'bytes=-500'), rng(1000, b'bytes=100-'),
                rng(1000, b'bytes=0-0,5-9'), rng(0, b'bytes=0-'), rng(1 << 40, b'bytes=18446744073709551615-')])

write('accept_encoding', [b'\x00gzip, deflate, br;q=0.9, zstd;q=0.8, *;q=0', b'\x05identity;q=0\n*;Q=0.5',
                          b'\x0abr;q=1.000, gzip;q=0.001', b'\x01zstd;q=0, *'])

write('request_path', [b'/a%2Fb/%25/c%20d', b'/files/%2e%2e/secret', b'/%E2%82%AC/x', b'/%2f%2F%25%41'])

write('static_path', [b'\x00a.txt', b'\x00dir/b.txt', b'\x00../outside/secret.txt', b'\x00%2e%2e/x', b'\x00out-link',
                      b'\x00.env', b'\x01.env', b'\x01dir/.git/config', b'\x00dir/in-link', b'\x00out-dir/secret.txt',
                      b'\x00../root-evil/x.txt', b'\x00dir/', b'\x00/index.html', b'\x00dir%2Fb.txt'])

write('content_coding', [b'\x00' + hello, b'\x01' + hello, b'\x02' + hello, b'\xe4' + bytes(range(256)) * 8,
                         b'\x00' + zlib.compress(hello)[2:], b'\x02(\xb5/\xfd'])


def h2frame(kind, flags, stream, payload):
    return struct.pack('>I', len(payload))[1:] + bytes([kind, flags]) + struct.pack('>I', stream) + payload


def hpack(headers):
    # Literal fields without indexing, no Huffman (RFC 7541 §6.2.2): enough for seeds.
    out = b''
    for name, value in headers:
        out += b'\x00' + bytes([len(name)]) + name + bytes([len(value)]) + value
    return out


PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
h2get = hpack([(b':method', b'GET'), (b':scheme', b'http'), (b':path', b'/'), (b':authority', b'x')])
h2post = hpack([(b':method', b'POST'), (b':scheme', b'http'), (b':path', b'/dyn/1'), (b':authority', b'x'),
                (b'content-length', b'5')])
write('connection', [
    b'GET / HTTP/1.1\r\nhost: x\r\n\r\n',
    b'GET /dyn/a?b=c HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n',
    b'POST /dyn/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nhost: x\r\n\r\n',
    b'POST /dyn/1 HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nx-t: 1\r\n\r\n',
    b'GET / HTTP/1.0\r\n\r\n',
    b'PUT /dyn/x HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 3\r\n\r\nabc',
    PREFACE + h2frame(4, 0, 0, b'') + h2frame(1, 5, 1, h2get),
    PREFACE + h2frame(4, 0, 0, struct.pack('>HI', 4, 1 << 20)) + h2frame(1, 4, 1, h2post) + h2frame(0, 1, 1, b'hello'),
    PREFACE + h2frame(4, 0, 0, b'') + h2frame(1, 5, 1, h2get) + h2frame(3, 0, 1, struct.pack('>I', 8))
    + h2frame(6, 0, 0, b'12345678') + h2frame(7, 0, 0, struct.pack('>II', 0, 0)),
    PREFACE + h2frame(4, 0, 0, b'') + h2frame(1, 1, 3, h2get) + h2frame(9, 4, 3, b''),
])
