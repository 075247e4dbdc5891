"""An HTTP/2 conformance suite run against push-receiver (or any HTTP/2 server), from a client we
did not write: frames are built and parsed by hyperframe and header blocks by hpack (the PyPI h2
project's own libraries), on a plain socket, so the suite can send what a well-behaved client never
would. The cases are h2spec's (github.com/summerwind/h2spec, groups `generic`, `http2` and `hpack`),
all 147 of them, ported with the same expectations and the same verdicts: a stream error passes on RST_STREAM or
GOAWAY with one of the codes, or on the connection closing; a connection error on GOAWAY with the
code or the connection closing; a case that hears nothing within the timeout fails.

usage: h2_conformance.py HOST PORT [--tls] [--path PATH] [--timeout SECONDS] [--only ID-PREFIX]
Prints "ok ID description" or "FAIL ID description: expected …; got …" per case, then
"passed N of M"; exit status 1 when a case fails.
"""
import argparse
import socket
import ssl
import sys
import time

from hpack import Encoder
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              PriorityFrame, RstStreamFrame, SettingsFrame, WindowUpdateFrame)

PROTOCOL_ERROR, FLOW_CONTROL_ERROR, STREAM_CLOSED, FRAME_SIZE_ERROR = 0x1, 0x3, 0x5, 0x6
REFUSED_STREAM, COMPRESSION_ERROR, NO_ERROR = 0x7, 0x9, 0x0
MAX_WINDOW = 2 ** 31 - 1

args = None


class Closed(Exception):
    pass


class Conn:
    """One connection: raw frames out, parsed frames (or 'closed'/'timeout') in."""

    def __init__(self):
        raw = socket.create_connection((args.host, args.port), timeout=args.timeout)
        if args.tls:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            context.set_alpn_protocols(["h2"])
            raw = context.wrap_socket(raw, server_hostname="localhost")
        self.sock = raw
        self.sock.settimeout(args.timeout)
        self.buffer = b""
        self.encoder = Encoder()
        self.closed = False
        self.server_settings = {}

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            self.closed = True

    def write(self, *frames):
        self.send(b"".join(f.serialize() for f in frames))

    def headers_block(self, fields):
        return self.encoder.encode(fields)

    def next_event(self, deadline):
        """The next frame, or 'closed', or 'timeout'."""
        while True:
            if len(self.buffer) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
                if len(self.buffer) >= 9 + length:
                    frame.parse_body(memoryview(self.buffer[9:9 + length]))
                    self.buffer = self.buffer[9 + length:]
                    return frame
            if self.closed:
                return "closed"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return "timeout"
            except (OSError, ssl.SSLError):
                chunk = b""
            if not chunk:
                self.closed = True
                if len(self.buffer) < 9:
                    return "closed"
            self.buffer += chunk

    def events(self):
        deadline = time.monotonic() + args.timeout
        while True:
            event = self.next_event(deadline)
            yield event
            if event in ("closed", "timeout"):
                return

    def handshake(self, settings=None):
        self.send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        frame = SettingsFrame(0)
        frame.settings = settings or {}
        self.write(frame)
        got_settings = got_ack = False
        for event in self.events():
            if isinstance(event, SettingsFrame):
                if "ACK" in event.flags:
                    got_ack = True
                else:
                    self.server_settings.update(event.settings)
                    self.write(SettingsFrame(0, flags=["ACK"]))
                    got_settings = True
            if got_settings and got_ack:
                return
            if event in ("closed", "timeout"):
                raise Closed("handshake: " + event)


def describe(event):
    if isinstance(event, str):
        return event
    name = type(event).__name__.replace("Frame", "").upper()
    code = getattr(event, "error_code", None)
    return f"{name}(stream {event.stream_id}{', code %d' % code if code is not None else ''}{', flags ' + ','.join(sorted(event.flags)) if event.flags else ''})"


class Failure(Exception):
    pass


def verify_connection_error(conn, *codes):
    seen = None
    for event in conn.events():
        if event == "closed":
            return
        if isinstance(event, GoAwayFrame) and event.error_code in codes:
            return
        if event == "timeout":
            break
        seen = seen or event
    raise Failure(f"expected GOAWAY {codes} or the connection closed; got {describe(seen or 'timeout')}")


def verify_stream_error(conn, *codes):
    seen = None
    for event in conn.events():
        if event == "closed":
            return
        if isinstance(event, (GoAwayFrame, RstStreamFrame)) and event.error_code in codes:
            return
        if event == "timeout":
            break
        if not isinstance(event, (WindowUpdateFrame, SettingsFrame, PingFrame)):
            seen = seen or event
    raise Failure(f"expected RST_STREAM or GOAWAY {codes}, or the connection closed; got {describe(seen or 'timeout')}")


def verify_stream_close(conn, stream=1):
    for event in conn.events():
        if isinstance(event, (DataFrame, HeadersFrame)) and event.stream_id == stream and "END_STREAM" in event.flags:
            return
        if isinstance(event, RstStreamFrame) and event.error_code == NO_ERROR:
            return
        if event in ("closed", "timeout"):
            raise Failure(f"expected stream {stream} to end; got {event}")


def verify_headers(conn, stream=1):
    for event in conn.events():
        if isinstance(event, HeadersFrame) and event.stream_id == stream:
            return
        if event in ("closed", "timeout") or isinstance(event, (GoAwayFrame, RstStreamFrame)):
            raise Failure(f"expected HEADERS on stream {stream}; got {describe(event)}")


def verify_ping_ack(conn, data):
    for event in conn.events():
        if isinstance(event, PingFrame) and "ACK" in event.flags:
            if event.opaque_data == data:
                return
            raise Failure(f"PING ACK with other data: {event.opaque_data!r}")
        if event in ("closed", "timeout") or isinstance(event, GoAwayFrame):
            raise Failure(f"expected a PING ACK; got {describe(event)}")


def verify_data_length(conn, length, stream=1):
    for event in conn.events():
        if isinstance(event, DataFrame) and event.stream_id == stream:
            if len(event.data) == length:
                return
            raise Failure(f"expected DATA of {length} bytes; got {len(event.data)}")
        if event in ("closed", "timeout") or isinstance(event, (GoAwayFrame, RstStreamFrame)):
            raise Failure(f"expected DATA of {length} bytes; got {describe(event)}")


def verify_settings_ack(conn):
    for event in conn.events():
        if isinstance(event, SettingsFrame) and "ACK" in event.flags:
            return
        if event in ("closed", "timeout") or isinstance(event, GoAwayFrame):
            raise Failure(f"expected a SETTINGS ACK; got {describe(event)}")


def still_alive(conn):
    """The connection still answers: a PING gets its ACK."""
    conn.write(PingFrame(0, opaque_data=b"h2spec\x00\x00"))
    verify_ping_ack(conn, b"h2spec\x00\x00")


# MARK: helpers for the cases

def common(method="GET"):
    return [(":method", method), (":scheme", "https" if args.tls else "http"), (":path", args.path),
            (":authority", f"{args.host}:{args.port}")]


def post():
    return common("POST") + [("content-length", "4")]


def headers(conn, stream=1, fields=None, end_stream=True, end_headers=True, **extra):
    flags = (["END_STREAM"] if end_stream else []) + (["END_HEADERS"] if end_headers else [])
    frame = HeadersFrame(stream, flags=flags)
    frame.data = conn.headers_block(fields if fields is not None else common())
    for key, value in extra.items():
        setattr(frame, key, value)
    if "depends_on" in extra:
        frame.flags.add("PRIORITY")
    return frame


def data(stream=1, payload=b"test", end_stream=True, pad=None):
    frame = DataFrame(stream, data=payload, flags=["END_STREAM"] if end_stream else [])
    if pad is not None:
        frame.flags.add("PADDED")
        frame.pad_length = pad
    return frame


def raw(length, type_, flags, stream, payload):
    return length.to_bytes(3, "big") + bytes([type_, flags]) + stream.to_bytes(4, "big") + payload


def settings(values):
    frame = SettingsFrame(0)
    frame.settings = values
    return frame


def rst(stream, code=0x8):
    return RstStreamFrame(stream, error_code=code)


CASES = []


def case(identifier, description):
    def register(run):
        CASES.append((identifier, description, run))
        return run
    return register


# MARK: generic

@case("generic/1/1", "Sends a client connection preface")
def _(c):
    c.handshake()


@case("generic/2/1", "Sends a PRIORITY frame on idle stream")
def _(c):
    c.handshake(); c.write(PriorityFrame(3, depends_on=0, stream_weight=255)); c.write(headers(c, 1)); verify_headers(c)


@case("generic/2/2", "Sends a WINDOW_UPDATE frame on half-closed (remote) stream")
def _(c):
    c.handshake(); c.write(headers(c, 1), WindowUpdateFrame(1, window_increment=1)); verify_headers(c)


@case("generic/2/3", "Sends a PRIORITY frame on half-closed (remote) stream")
def _(c):
    c.handshake(); c.write(headers(c, 1), PriorityFrame(1, depends_on=0, stream_weight=255)); verify_headers(c)


@case("generic/2/4", "Sends a RST_STREAM frame on half-closed (remote) stream")
def _(c):
    c.handshake(); c.write(headers(c, 1), rst(1)); still_alive(c)


@case("generic/2/5", "Sends a PRIORITY frame on closed stream")
def _(c):
    c.handshake(); c.write(headers(c, 1)); verify_stream_close(c)
    c.write(PriorityFrame(1, depends_on=0, stream_weight=255)); still_alive(c)


@case("generic/3.10/1", "Sends a CONTINUATION frame")
def _(c):
    c.handshake()
    block = c.headers_block(common())
    c.write(HeadersFrame(1, data=block[:5], flags=["END_STREAM"]), ContinuationFrame(1, data=block[5:], flags=["END_HEADERS"]))
    verify_headers(c)


@case("generic/3.10/2", "Sends multiple CONTINUATION frames")
def _(c):
    c.handshake()
    block = c.headers_block(common())
    c.write(HeadersFrame(1, data=block[:3], flags=["END_STREAM"]), ContinuationFrame(1, data=block[3:6]),
            ContinuationFrame(1, data=block[6:], flags=["END_HEADERS"]))
    verify_headers(c)


@case("generic/3.1/1", "Sends a DATA frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False), data(1)); verify_headers(c)


@case("generic/3.1/2", "Sends multiple DATA frames")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False), data(1, b"te", False), data(1, b"st")); verify_headers(c)


@case("generic/3.1/3", "Sends a DATA frame with padding")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False), data(1, pad=8)); verify_headers(c)


@case("generic/3.2/1", "Sends a HEADERS frame")
def _(c):
    c.handshake(); c.write(headers(c, 1)); verify_headers(c)


@case("generic/3.2/2", "Sends a HEADERS frame with padding")
def _(c):
    c.handshake()
    frame = headers(c, 1); frame.flags.add("PADDED"); frame.pad_length = 8
    c.write(frame); verify_headers(c)


@case("generic/3.2/3", "Sends a HEADERS frame with priority")
def _(c):
    c.handshake(); c.write(headers(c, 1, depends_on=0, stream_weight=255)); verify_headers(c)


@case("generic/3.3/1", "Sends a PRIORITY frame with priority 1")
def _(c):
    c.handshake(); c.write(PriorityFrame(1, depends_on=0, stream_weight=0), headers(c, 1)); verify_headers(c)


@case("generic/3.3/2", "Sends a PRIORITY frame with priority 256")
def _(c):
    c.handshake(); c.write(PriorityFrame(1, depends_on=0, stream_weight=255), headers(c, 1)); verify_headers(c)


@case("generic/3.3/3", "Sends a PRIORITY frame with stream dependency")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), PriorityFrame(3, depends_on=1, stream_weight=255), headers(c, 3)); verify_headers(c, 3)


@case("generic/3.3/4", "Sends a PRIORITY frame with exclusive")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), PriorityFrame(3, depends_on=1, stream_weight=255, exclusive=True), headers(c, 3)); verify_headers(c, 3)


@case("generic/3.3/5", "Sends a PRIORITY frame for an idle stream, then send a HEADER frame for a lower stream ID")
def _(c):
    c.handshake(); c.write(PriorityFrame(3, depends_on=0, stream_weight=255), headers(c, 1)); verify_headers(c)


@case("generic/3.4/1", "Sends a RST_STREAM frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), rst(1)); still_alive(c)


@case("generic/3.5/1", "Sends a SETTINGS frame")
def _(c):
    c.handshake(); c.write(settings({SettingsFrame.MAX_CONCURRENT_STREAMS: 100})); verify_settings_ack(c)


@case("generic/3.7/1", "Sends a PING frame")
def _(c):
    c.handshake(); c.write(PingFrame(0, opaque_data=b"h2spec\x00\x00")); verify_ping_ack(c, b"h2spec\x00\x00")


@case("generic/3.8/1", "Sends a GOAWAY frame")
def _(c):
    c.handshake(); c.write(GoAwayFrame(0, last_stream_id=0, error_code=0)); still_alive_or_closed(c)


def still_alive_or_closed(c):
    c.write(PingFrame(0, opaque_data=b"h2spec\x00\x00"))
    for event in c.events():
        if event == "closed" or (isinstance(event, PingFrame) and "ACK" in event.flags):
            return
        if event == "timeout":
            raise Failure("neither a PING ACK nor the connection closed")


@case("generic/3.9/1", "Sends a WINDOW_UPDATE frame with stream ID 0")
def _(c):
    c.handshake(); c.write(WindowUpdateFrame(0, window_increment=1)); still_alive(c)


@case("generic/3.9/2", "Sends a WINDOW_UPDATE frame with stream ID 1")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), WindowUpdateFrame(1, window_increment=1), data(1)); verify_headers(c)


@case("generic/4/1", "Sends a GET request")
def _(c):
    c.handshake(); c.write(headers(c, 1)); verify_headers(c)


@case("generic/4/2", "Sends a HEAD request")
def _(c):
    c.handshake(); c.write(headers(c, 1, common("HEAD"))); verify_headers(c)


@case("generic/4/3", "Sends a POST request")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False), data(1)); verify_headers(c)


@case("generic/4/4", "Sends a POST request with trailers")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False), data(1, end_stream=False), headers(c, 1, [("trailer", "x")])); verify_headers(c)


def hpack_case(identifier, description, block):
    @case(identifier, description)
    def _(c):
        c.handshake()
        base = Encoder().encode(common())
        c.write(HeadersFrame(1, data=base + block, flags=["END_STREAM", "END_HEADERS"])); verify_headers(c)


hpack_case("generic/5/1", "Sends a indexed header field representation", b"\x90")
hpack_case("generic/5/2", "Sends a literal header field with incremental indexing - indexed name", b"\x7a\x04test")
hpack_case("generic/5/3", "Sends a literal header field with incremental indexing - indexed name (with Huffman coding)", b"\x7a\x83\x49\x50\x9f")
hpack_case("generic/5/4", "Sends a literal header field with incremental indexing - new name", b"\x40\x06x-test\x04test")
# Huffman-coded strings (RFC 7541 Appendix B): "test" is 49 50 9f, "x-test" f2 b2 4a 84 ff.
HUFFMAN_TEST = b"\x83\x49\x50\x9f"
HUFFMAN_X_TEST = b"\x85\xf2\xb2\x4a\x84\xff"
hpack_case("generic/5/5", "Sends a literal header field with incremental indexing - new name (with Huffman coding)", b"\x40" + HUFFMAN_X_TEST + HUFFMAN_TEST)
hpack_case("generic/5/6", "Sends a literal header field without indexing - indexed name", b"\x0f\x2b\x04test")
hpack_case("generic/5/7", "Sends a literal header field without indexing - indexed name (with Huffman coding)", b"\x0f\x2b" + HUFFMAN_TEST)
hpack_case("generic/5/8", "Sends a literal header field without indexing - new name", b"\x00\x06x-test\x04test")
hpack_case("generic/5/9", "Sends a literal header field without indexing - new name (huffman encoded)", b"\x00" + HUFFMAN_X_TEST + HUFFMAN_TEST)
hpack_case("generic/5/10", "Sends a literal header field never indexed - indexed name", b"\x1f\x2b\x04test")
hpack_case("generic/5/11", "Sends a literal header field never indexed - indexed name (huffman encoded)", b"\x1f\x2b" + HUFFMAN_TEST)
hpack_case("generic/5/12", "Sends a literal header field never indexed - new name", b"\x10\x06x-test\x04test")
hpack_case("generic/5/13", "Sends a literal header field never indexed - new name (huffman encoded)", b"\x10" + HUFFMAN_X_TEST + HUFFMAN_TEST)


@case("generic/5/14", "Sends a dynamic table size update")
def _(c):
    c.handshake(); c.write(HeadersFrame(1, data=b"\x3f\xe1\x1f" + Encoder().encode(common()), flags=["END_STREAM", "END_HEADERS"])); verify_headers(c)


@case("generic/5/15", "Sends multiple dynamic table size update")
def _(c):
    c.handshake(); c.write(HeadersFrame(1, data=b"\x20\x3f\xe1\x1f" + Encoder().encode(common()), flags=["END_STREAM", "END_HEADERS"])); verify_headers(c)


# MARK: http2

@case("http2/3.5/1", "Sends client connection preface")
def _(c):
    c.handshake()


@case("http2/3.5/2", "Sends invalid connection preface")
def _(c):
    c.send(b"INVALID CONNECTION PREFACE\r\n\r\n")
    for event in c.events():
        if event == "closed":
            return
        if event == "timeout":
            raise Failure("expected the connection closed; got timeout")


@case("http2/4.1/1", "Sends a frame with unknown type")
def _(c):
    c.handshake(); c.send(raw(8, 0x16, 0, 0, b"\x00" * 8)); still_alive(c)


@case("http2/4.1/2", "Sends a frame with undefined flag")
def _(c):
    c.handshake(); c.send(raw(8, 0x6, 0x16, 0, b"h2spec\x00\x00")); verify_ping_ack(c, b"h2spec\x00\x00")


@case("http2/4.1/3", "Sends a frame with reserved field bit")
def _(c):
    c.handshake()
    c.send(raw(8, 0x6, 0, 0x80000000, b"h2spec\x00\x00")); verify_ping_ack(c, b"h2spec\x00\x00")


@case("http2/4.2/1", "Sends a DATA frame with 2^14 octets in length")
def _(c):
    c.handshake(); c.write(headers(c, 1, common("POST"), end_stream=False), data(1, b"x" * 16384)); verify_headers(c)


@case("http2/4.2/2", "Sends a large size DATA frame that exceeds the SETTINGS_MAX_FRAME_SIZE")
def _(c):
    c.handshake(); c.write(headers(c, 1, common("POST"), end_stream=False)); c.send(raw(16385, 0, 1, 1, b"x" * 16385))
    verify_stream_error(c, FRAME_SIZE_ERROR)


@case("http2/4.2/3", "Sends a large size HEADERS frame that exceeds the SETTINGS_MAX_FRAME_SIZE")
def _(c):
    c.handshake()
    block = c.headers_block(common() + [(f"x-dummy{i}", "x" * 4000) for i in range(5)])
    c.send(raw(len(block), 1, 0x5, 1, block)); verify_connection_error(c, FRAME_SIZE_ERROR)


@case("http2/4.3/1", "Sends invalid header block fragment")
def _(c):
    c.handshake(); c.send(raw(2, 1, 0x5, 1, b"\x00\x00")); verify_connection_error(c, COMPRESSION_ERROR)


@case("http2/4.3/2", "Sends a PRIORITY frame while sending the header blocks")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_headers=False), PriorityFrame(1, depends_on=0, stream_weight=255)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/4.3/3", "Sends a HEADERS frame to another stream while sending the header blocks")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_headers=False), headers(c, 3)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1.1/1", "Sends even-numbered stream identifier")
def _(c):
    c.handshake(); c.write(headers(c, 2)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1.1/2", "Sends stream identifier that is numerically smaller than previous")
def _(c):
    c.handshake(); c.write(headers(c, 5)); verify_headers(c, 5); c.write(headers(c, 3)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1.2/1", "Sends HEADERS frames that causes their advertised concurrent stream limit to be exceeded")
def _(c):
    c.handshake()
    limit = c.server_settings.get(SettingsFrame.MAX_CONCURRENT_STREAMS)
    if limit is None or limit > 2000:
        raise Failure(f"the server announces no usable SETTINGS_MAX_CONCURRENT_STREAMS ({limit})")
    c.write(*[headers(c, 2 * i + 1, end_stream=False) for i in range(limit + 1)])
    verify_stream_error(c, PROTOCOL_ERROR, REFUSED_STREAM)


@case("http2/5.1/1", "idle: Sends a DATA frame")
def _(c):
    c.handshake(); c.write(data(1)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/2", "idle: Sends a RST_STREAM frame")
def _(c):
    c.handshake(); c.write(rst(1)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/3", "idle: Sends a WINDOW_UPDATE frame")
def _(c):
    c.handshake(); c.write(WindowUpdateFrame(1, window_increment=100)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/4", "idle: Sends a CONTINUATION frame")
def _(c):
    c.handshake(); c.write(ContinuationFrame(1, data=c.headers_block(common()), flags=["END_HEADERS"])); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/5", "half closed (remote): Sends a DATA frame")
def _(c):
    c.handshake(); c.write(headers(c, 1), data(1)); verify_stream_error(c, STREAM_CLOSED)


@case("http2/5.1/6", "half closed (remote): Sends a HEADERS frame")
def _(c):
    c.handshake(); c.write(headers(c, 1), headers(c, 1)); verify_stream_error(c, STREAM_CLOSED)


@case("http2/5.1/7", "half closed (remote): Sends a CONTINUATION frame")
def _(c):
    c.handshake(); c.write(headers(c, 1), ContinuationFrame(1, data=c.headers_block([("x-dummy0", "x")]), flags=["END_HEADERS"]))
    verify_stream_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.1/8", "closed: Sends a DATA frame after sending RST_STREAM frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), rst(1), data(1)); verify_stream_error(c, STREAM_CLOSED)


@case("http2/5.1/9", "closed: Sends a HEADERS frame after sending RST_STREAM frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), rst(1), headers(c, 1)); verify_stream_error(c, STREAM_CLOSED)


@case("http2/5.1/10", "closed: Sends a CONTINUATION frame after sending RST_STREAM frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), rst(1), ContinuationFrame(1, data=c.headers_block([("x-dummy0", "x")]), flags=["END_HEADERS"]))
    verify_stream_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.1/11", "closed: Sends a DATA frame")
def _(c):
    c.handshake(); c.write(headers(c, 1)); verify_stream_close(c); c.write(data(1)); verify_stream_error(c, STREAM_CLOSED)


@case("http2/5.1/12", "closed: Sends a HEADERS frame")
def _(c):
    c.handshake(); c.write(headers(c, 1)); verify_stream_close(c); c.write(headers(c, 1)); verify_connection_error(c, STREAM_CLOSED)


@case("http2/5.1/13", "closed: Sends a CONTINUATION frame")
def _(c):
    c.handshake(); c.write(headers(c, 1)); verify_stream_close(c)
    c.write(ContinuationFrame(1, data=c.headers_block([("x-dummy0", "x")]), flags=["END_HEADERS"])); verify_connection_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.3.1/1", "Sends HEADERS frame that depends on itself")
def _(c):
    c.handshake(); c.write(headers(c, 1, depends_on=1, stream_weight=255)); verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/5.3.1/2", "Sends PRIORITY frame that depend on itself")
def _(c):
    c.handshake(); c.write(PriorityFrame(2, depends_on=2, stream_weight=255)); verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/5.4.1/1", "Sends an invalid PING frame for connection close")
def _(c):
    c.handshake(); c.send(raw(6, 0x6, 0, 0, b"\x00" * 6))
    for event in c.events():
        if event == "closed":
            return
        if event == "timeout":
            raise Failure("expected the connection closed")


@case("http2/5.4.1/2", "Sends an invalid PING frame to receive GOAWAY frame")
def _(c):
    c.handshake(); c.send(raw(6, 0x6, 0, 0, b"\x00" * 6))
    for event in c.events():
        if isinstance(event, GoAwayFrame):
            return
        if event in ("closed", "timeout"):
            raise Failure(f"expected GOAWAY; got {event}")


@case("http2/5.5/1", "Sends an unknown extension frame")
def _(c):
    c.handshake(); c.send(raw(8, 0xff, 0, 0, b"\x00" * 8)); still_alive(c)


@case("http2/5.5/2", "Sends an unknown extension frame in the middle of a header block")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_headers=False)); c.send(raw(8, 0xff, 0, 1, b"\x00" * 8)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.1/1", "Sends a DATA frame with 0x0 stream identifier")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False)); c.send(raw(4, 0, 1, 0, b"test")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.1/2", "Sends a DATA frame on the stream that is not in \"open\" or \"half-closed (local)\" state")
def _(c):
    c.handshake(); c.write(headers(c, 1), data(1)); verify_stream_error(c, STREAM_CLOSED)


@case("http2/6.1/3", "Sends a DATA frame with invalid pad length")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False)); c.send(raw(5, 0, 0x9, 1, b"\x06test")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/1", "Sends a HEADERS frame without the END_HEADERS flag, and a PRIORITY frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_headers=False), PriorityFrame(3, depends_on=0, stream_weight=255)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/2", "Sends a HEADERS frame to another stream while sending a HEADERS frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_headers=False), headers(c, 3)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/3", "Sends a HEADERS frame with 0x0 stream identifier")
def _(c):
    c.handshake(); block = c.headers_block(common()); c.send(raw(len(block), 1, 0x5, 0, block)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/4", "Sends a HEADERS frame with invalid pad length")
def _(c):
    c.handshake(); block = c.headers_block(common())
    c.send(raw(len(block) + 1, 1, 0xd, 1, bytes([len(block) + 1]) + block)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.3/1", "Sends a PRIORITY frame with 0x0 stream identifier")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False)); c.send(raw(5, 2, 0, 0, b"\x80\x00\x00\x01\x0a")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.3/2", "Sends a PRIORITY frame with a length other than 5 octets")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False)); c.send(raw(4, 2, 0, 1, b"\x80\x00\x00\x01")); verify_stream_error(c, FRAME_SIZE_ERROR)


@case("http2/6.4/1", "Sends a RST_STREAM frame with 0x0 stream identifier")
def _(c):
    c.handshake(); c.send(raw(4, 3, 0, 0, b"\x00\x00\x00\x08")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.4/2", "Sends a RST_STREAM frame on a idle stream")
def _(c):
    c.handshake(); c.send(raw(4, 3, 0, 1, b"\x00\x00\x00\x08")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.4/3", "Sends a RST_STREAM frame with a length other than 4 octets")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False)); c.send(raw(3, 3, 0, 1, b"\x00\x00\x08")); verify_connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.5/1", "Sends a SETTINGS frame with ACK flag and payload")
def _(c):
    c.handshake(); c.send(raw(6, 4, 1, 0, b"\x00\x03\x00\x00\x00\x64")); verify_connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.5/2", "Sends a SETTINGS frame with a stream identifier other than 0x0")
def _(c):
    c.handshake(); c.send(raw(6, 4, 0, 1, b"\x00\x03\x00\x00\x00\x64")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5/3", "Sends a SETTINGS frame with a length other than a multiple of 6 octets")
def _(c):
    c.handshake(); c.send(raw(3, 4, 0, 0, b"\x00\x03\x00")); verify_connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.5.2/1", "SETTINGS_ENABLE_PUSH (0x2): Sends the value other than 0 or 1")
def _(c):
    c.handshake(); c.send(raw(6, 4, 0, 0, b"\x00\x02\x00\x00\x00\x02")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/2", "SETTINGS_INITIAL_WINDOW_SIZE (0x4): Sends the value above the maximum flow control window size")
def _(c):
    c.handshake(); c.send(raw(6, 4, 0, 0, b"\x00\x04\x80\x00\x00\x00")); verify_connection_error(c, FLOW_CONTROL_ERROR)


@case("http2/6.5.2/3", "SETTINGS_MAX_FRAME_SIZE (0x5): Sends the value below the initial value")
def _(c):
    c.handshake(); c.send(raw(6, 4, 0, 0, b"\x00\x05\x00\x00\x3f\xff")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/4", "SETTINGS_MAX_FRAME_SIZE (0x5): Sends the value above the maximum allowed frame size")
def _(c):
    c.handshake(); c.send(raw(6, 4, 0, 0, b"\x00\x05\x01\x00\x00\x00")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/5", "Sends a SETTINGS frame with unknown identifier")
def _(c):
    c.handshake(); c.send(raw(6, 4, 0, 0, b"\x00\xff\x00\x00\x00\x00")); verify_settings_ack(c)


@case("http2/6.5.3/1", "Sends multiple values of SETTINGS_INITIAL_WINDOW_SIZE")
def _(c):
    c.handshake(); c.send(raw(12, 4, 0, 0, b"\x00\x04\x00\x00\x00\x64\x00\x04\x00\x00\x00\x01")); verify_settings_ack(c)
    c.write(headers(c, 1)); verify_data_length(c, 1)


@case("http2/6.5.3/2", "Sends a SETTINGS frame without ACK flag")
def _(c):
    c.handshake(); c.write(settings({SettingsFrame.INITIAL_WINDOW_SIZE: 100})); verify_settings_ack(c)


@case("http2/6.7/1", "Sends a PING frame")
def _(c):
    c.handshake(); c.write(PingFrame(0, opaque_data=b"h2spec\x00\x00")); verify_ping_ack(c, b"h2spec\x00\x00")


@case("http2/6.7/2", "Sends a PING frame with ACK")
def _(c):
    c.handshake(); c.write(PingFrame(0, opaque_data=b"invalid\x00", flags=["ACK"]), PingFrame(0, opaque_data=b"h2spec\x00\x00"))
    verify_ping_ack(c, b"h2spec\x00\x00")


@case("http2/6.7/3", "Sends a PING frame with a stream identifier field value other than 0x0")
def _(c):
    c.handshake(); c.send(raw(8, 6, 0, 1, b"h2spec\x00\x00")); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.7/4", "Sends a PING frame with a length field value other than 8")
def _(c):
    c.handshake(); c.send(raw(6, 6, 0, 0, b"h2spec")); verify_connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.8/1", "Sends a GOAWAY frame with a stream identifier other than 0x0")
def _(c):
    c.handshake(); c.send(raw(8, 7, 0, 1, b"\x00" * 8)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.9/1", "Sends a WINDOW_UPDATE frame with a flow control window increment of 0")
def _(c):
    c.handshake(); c.write(WindowUpdateFrame(0, window_increment=0)); verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.9/2", "Sends a WINDOW_UPDATE frame with a flow control window increment of 0 on a stream")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), WindowUpdateFrame(1, window_increment=0)); verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/6.9/3", "Sends a WINDOW_UPDATE frame with a length other than 4 octets")
def _(c):
    c.handshake(); c.send(raw(3, 8, 0, 0, b"\x00\x00\x01")); verify_connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.9.1/1", "Sends SETTINGS frame to set the initial window size to 1 and sends HEADERS frame")
def _(c):
    c.handshake(); c.write(settings({SettingsFrame.INITIAL_WINDOW_SIZE: 1})); verify_settings_ack(c)
    c.write(headers(c, 1)); verify_data_length(c, 1)


@case("http2/6.9.1/2", "Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1")
def _(c):
    c.handshake(); c.write(WindowUpdateFrame(0, window_increment=MAX_WINDOW), WindowUpdateFrame(0, window_increment=MAX_WINDOW))
    verify_connection_error(c, FLOW_CONTROL_ERROR)


@case("http2/6.9.1/3", "Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1 on a stream")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), WindowUpdateFrame(1, window_increment=MAX_WINDOW),
                           WindowUpdateFrame(1, window_increment=MAX_WINDOW))
    verify_stream_error(c, FLOW_CONTROL_ERROR)


@case("http2/6.9.2/1", "Changes SETTINGS_INITIAL_WINDOW_SIZE after sending HEADERS frame")
def _(c):
    c.handshake(); c.write(settings({SettingsFrame.INITIAL_WINDOW_SIZE: 0})); verify_settings_ack(c)
    c.write(headers(c, 1), settings({SettingsFrame.INITIAL_WINDOW_SIZE: 1})); verify_data_length(c, 1)


@case("http2/6.9.2/2", "Sends a SETTINGS frame for window size to be negative")
def _(c):
    c.handshake(); c.write(settings({SettingsFrame.INITIAL_WINDOW_SIZE: 3})); verify_settings_ack(c)
    c.write(headers(c, 1)); verify_data_length(c, 3)
    c.write(settings({SettingsFrame.INITIAL_WINDOW_SIZE: 2})); verify_settings_ack(c)
    c.write(WindowUpdateFrame(1, window_increment=2)); verify_data_length(c, 1)


@case("http2/6.9.2/3", "Sends a SETTINGS_INITIAL_WINDOW_SIZE settings with an exceeded maximum window size value")
def _(c):
    c.handshake(); c.send(raw(6, 4, 0, 0, b"\x00\x04\x80\x00\x00\x00")); verify_connection_error(c, FLOW_CONTROL_ERROR)


@case("http2/6.10/1", "Sends multiple CONTINUATION frames preceded by a HEADERS frame")
def _(c):
    c.handshake()
    block = c.headers_block(common() + [("x-dummy0", "x" * 100), ("x-dummy1", "y" * 100)])
    c.write(HeadersFrame(1, data=block[:60], flags=["END_STREAM"]), ContinuationFrame(1, data=block[60:120]),
            ContinuationFrame(1, data=block[120:], flags=["END_HEADERS"]))
    verify_headers(c)


@case("http2/6.10/2", "Sends a CONTINUATION frame followed by any frame other than CONTINUATION")
def _(c):
    c.handshake(); block = c.headers_block(common())
    c.write(HeadersFrame(1, data=block[:3], flags=["END_STREAM"]), ContinuationFrame(1, data=block[3:5]), data(1))
    verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/3", "Sends a CONTINUATION frame with 0x0 stream identifier")
def _(c):
    c.handshake(); block = c.headers_block(common())
    c.write(HeadersFrame(1, data=block[:3], flags=["END_STREAM"])); c.send(raw(len(block) - 3, 9, 4, 0, block[3:]))
    verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/4", "Sends a CONTINUATION frame preceded by a HEADERS frame with END_HEADERS flag")
def _(c):
    c.handshake(); c.write(headers(c, 1), ContinuationFrame(1, data=c.headers_block([("x-dummy0", "x")]), flags=["END_HEADERS"]))
    verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/5", "Sends a CONTINUATION frame preceded by a CONTINUATION frame with END_HEADERS flag")
def _(c):
    c.handshake(); block = c.headers_block(common())
    c.write(HeadersFrame(1, data=block[:3], flags=["END_STREAM"]), ContinuationFrame(1, data=block[3:], flags=["END_HEADERS"]),
            ContinuationFrame(1, data=c.headers_block([("x-dummy0", "x")]), flags=["END_HEADERS"]))
    verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/6", "Sends a CONTINUATION frame preceded by a DATA frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False), data(1, end_stream=False),
                           ContinuationFrame(1, data=c.headers_block([("x-dummy0", "x")]), flags=["END_HEADERS"]))
    verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/7/1", "Sends a GOAWAY frame with unknown error code")
def _(c):
    c.handshake(); c.write(GoAwayFrame(0, last_stream_id=0, error_code=0xff)); still_alive_or_closed(c)


@case("http2/7/2", "Sends a RST_STREAM frame with unknown error code")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False), rst(1, 0xff)); still_alive(c)


def malformed(identifier, description, fields=None, trailers=None):
    """A request (or trailers) that breaks §8.1.2; `fields` and `trailers` are functions, as the
    scheme and authority are known only once the arguments are read."""
    @case(identifier, description)
    def _(c):
        c.handshake()
        if trailers is None:
            c.write(headers(c, 1, fields()))
        else:
            c.write(headers(c, 1, post(), end_stream=False), data(1, end_stream=False), headers(c, 1, trailers()))
        verify_stream_error(c, PROTOCOL_ERROR)


def without(name):
    return [field for field in common() if field[0] != name]


def scheme():
    return "https" if args.tls else "http"


malformed("http2/8.1.2/1", "Sends a HEADERS frame that contains the header field name in uppercase letters", lambda: common() + [("X-TEST", "ok")])
malformed("http2/8.1.2.1/1", "Sends a HEADERS frame that contains a unknown pseudo-header field", lambda: common() + [(":test", "ok")])
malformed("http2/8.1.2.1/2", "Sends a HEADERS frame that contains the pseudo-header field defined for response", lambda: common() + [(":status", "200")])
malformed("http2/8.1.2.1/3", "Sends a HEADERS frame that contains a pseudo-header field as trailers", trailers=lambda: [(":method", "POST")])
malformed("http2/8.1.2.1/4", "Sends a HEADERS frame that contains a pseudo-header field that appears in a header block after a regular header field",
          lambda: [("x-test", "ok")] + common())
malformed("http2/8.1.2.2/1", "Sends a HEADERS frame that contains the connection-specific header field", lambda: common() + [("connection", "keep-alive")])
malformed("http2/8.1.2.2/2", "Sends a HEADERS frame that contains the TE header field with any value other than \"trailers\"",
          lambda: common() + [("te", "trailers, deflate")])
malformed("http2/8.1.2.3/1", "Sends a HEADERS frame with empty \":path\" pseudo-header field", lambda: without(":path") + [(":path", "")])
malformed("http2/8.1.2.3/2", "Sends a HEADERS frame that omits \":method\" pseudo-header field", lambda: without(":method"))
malformed("http2/8.1.2.3/3", "Sends a HEADERS frame that omits \":scheme\" pseudo-header field", lambda: without(":scheme"))
malformed("http2/8.1.2.3/4", "Sends a HEADERS frame that omits \":path\" pseudo-header field", lambda: without(":path"))
malformed("http2/8.1.2.3/5", "Sends a HEADERS frame with duplicated \":method\" pseudo-header field", lambda: [(":method", "GET")] + common())
malformed("http2/8.1.2.3/6", "Sends a HEADERS frame with duplicated \":scheme\" pseudo-header field", lambda: [(":scheme", scheme())] + common())
malformed("http2/8.1.2.3/7", "Sends a HEADERS frame with duplicated \":path\" pseudo-header field", lambda: common() + [(":path", args.path)])


@case("http2/8.1/1", "Sends a second HEADERS frame without the END_STREAM flag")
def _(c):
    c.handshake(); c.write(headers(c, 1, post(), end_stream=False), data(1, end_stream=False), headers(c, 1, [("x-test", "ok")], end_stream=False))
    verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.6/1", "Sends a HEADERS frame with the \"content-length\" header field which does not equal the DATA frame payload length")
def _(c):
    c.handshake(); c.write(headers(c, 1, common("POST") + [("content-length", "1")], end_stream=False), data(1)); verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.6/2", "Sends a HEADERS frame with the \"content-length\" header field which does not equal the sum of the multiple DATA frames payload length")
def _(c):
    c.handshake(); c.write(headers(c, 1, common("POST") + [("content-length", "1")], end_stream=False), data(1, end_stream=False), data(1))
    verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.2/1", "Sends a PUSH_PROMISE frame")
def _(c):
    c.handshake(); c.write(headers(c, 1, end_stream=False)); block = c.headers_block(common())
    c.send(raw(4 + len(block), 5, 4, 1, (2).to_bytes(4, "big") + block)); verify_connection_error(c, PROTOCOL_ERROR)


# MARK: hpack

def hpack_error(identifier, description, block):
    @case(identifier, description)
    def _(c):
        c.handshake(); c.send(raw(len(block), 1, 0x5, 1, block)); verify_connection_error(c, COMPRESSION_ERROR)


hpack_error("hpack/2.3.3/1", "Sends a indexed header field representation with invalid index", b"\xff\x80\x01")
hpack_error("hpack/2.3.3/2", "Sends a literal header field representation with invalid index", b"\x7f\x80\x01\x04test")
hpack_error("hpack/5.2/1", "Sends a Huffman-encoded string literal representation with padding longer than 7 bits", b"\x82\x86\x84\x41\x8a\x08\x9d\x5c\x0b\x81\x70\xdc\x79\xa6\x99\xff")
hpack_error("hpack/5.2/2", "Sends a Huffman-encoded string literal representation padded by zero", b"\x82\x86\x84\x41\x8a\x08\x9d\x5c\x0b\x81\x70\xdc\x79\xa6\x99\x00")
hpack_error("hpack/5.2/3", "Sends a Huffman-encoded string literal representation containing the EOS symbol", b"\x82\x86\x84\x41\x87\x3f\xff\xff\xff\xff\xff\xff")
hpack_error("hpack/6.1/1", "Sends a indexed header field representation with index 0", b"\x80")
hpack_error("hpack/6.3/1", "Sends a dynamic table size update larger than the value of SETTINGS_HEADER_TABLE_SIZE", b"\x3f\xe2\x1f\x82\x86\x84")


@case("hpack/4.2/1", "Sends a dynamic table size update at the end of header block")
def _(c):
    c.handshake(); block = Encoder().encode(common()) + b"\x20"
    c.send(raw(len(block), 1, 0x5, 1, block)); verify_connection_error(c, COMPRESSION_ERROR)


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--path", default="/")
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    passed = total = 0
    seen = set()
    for identifier, description, run in CASES:
        if not identifier.startswith(args.only) or identifier in seen:
            continue
        seen.add(identifier)
        total += 1
        conn = None
        try:
            conn = Conn()
            run(conn)
            passed += 1
            print(f"ok {identifier} {description}", flush=True)
        except (Failure, Closed, OSError) as error:
            print(f"FAIL {identifier} {description}: {error}", flush=True)
        finally:
            if conn is not None:
                try:
                    conn.sock.close()
                except OSError:
                    pass
    print(f"passed {passed} of {total}", flush=True)
    sys.exit(0 if passed == total else 1)


if __name__ == "__main__":
    main()
