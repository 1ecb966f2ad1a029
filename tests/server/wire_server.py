#!/usr/bin/env python3
"""A loopback HTTP/1.1 server that replays recorded model-provider responses to the real client.

The live backends (`openai:`, `anthropic:`) are tested against this server, never against the
network: each test names a scenario in the request path, and the server answers from that
scenario's capture file, one response per request, with the byte-level misbehaviour the capture
asks for (slow first byte, awkward splits, a reset, a stall, a truncated stream). It uses the
Python standard library only.

Usage: wire_server.py --captures DIR --port-file FILE [--log FILE] [--parent-pid PID]

  Binds 127.0.0.1 on a free port and, once listening, writes the port number to FILE (written to a
  temporary name and renamed, so a reader never sees a partial number). HTTP/1.1 with keep-alive,
  one daemon thread per connection. The server exits on SIGTERM/SIGINT, and by itself when the
  process that started it dies (its parent is polled every 0.2 s), so it never outlives its test.
  --parent-pid names that process (the starting shell's $BASHPID): then a parent that died
  while Python was still starting is noticed too.

Routing
  /<scenario>[/<rest>]  answered from DIR/<scenario>.json; names match [a-z0-9-]+, anything
                        else (or a missing file) is a 404. Each request to a scenario takes the
                        next entry of its `responses` array (a per-scenario counter shared by all
                        connections); after the last entry, the last one is served again.
  POST /_reset          clears the counters and the request log.
  GET  /_log            the request log: a JSON array with one object per request received, in
                        order, except those to the control endpoints:
                          {"scenario" (null for a malformed name), "n" (0-based index within the
                           scenario; null when no entry was served, a 404 or a 500), "method",
                           "path" (with the query), "headers" (lower-cased name -> value, repeated
                           headers joined with ", "), "body" (UTF-8 text, invalid bytes
                           replaced), "conn" (an id per TCP connection, so reuse is visible),
                           "t_ms" (milliseconds since the server started, to check backoff)}
  GET  /_health         200.
  With --log FILE every record is also appended to FILE as a JSON line; /_reset does not clear it.

Scenario file
  {"description": "what it exercises", "responses": [ENTRY, ...]}
  Top-level members other than `responses` are ignored. An invalid file is answered with a 500
  whose JSON error names the file and the member at fault; nothing of it is served.

Response entry (every member optional; unknown members are an error)
  status          int, default 200
  headers         object of name -> string (or number); written in this order as given.
                  Content-Type defaults to application/json, or text/event-stream with `sse`.
                  A Content-Length, Transfer-Encoding or Connection given here replaces the one
                  `framing` would add (to build deliberately wrong framing); `framing` alone decides
                  how the body is encoded.
  delay_ms        wait this long before the status line (a slow first byte)
  body kinds, at most one (none: an empty body):
    body          string, sent as UTF-8
    body_json     any JSON value, serialized compactly (UTF-8, not \\u-escaped)
    body_file     a file path relative to DIR (it must stay inside DIR), streamed
    sse           array of Server-Sent Events, each one of
                    {"event"?: name, "id"?: string, "data": string | JSON}   one frame; JSON data is
                        serialized compactly, string data with newlines becomes several data: lines
                    {"raw": string}   written verbatim (comments, broken frames, odd spacing)
    huge          {"prefix": s, "fill": s, "bytes": N, "suffix"?: s}: N bytes in all, the prefix,
                  the fill repeated, the suffix; generated while sending, never held whole
  sse_eol         line ending of rendered SSE frames: "\\n" (default), "\\r\\n" or "\\r"
  framing         "length" (Content-Length; default without `sse`), "chunked" (default with `sse`),
                  "close" (no length: Connection: close, and the end of the body is the close)
  split           write the body in pieces of this many bytes (with chunked framing, one chunk per
                  piece), so the client sees boundaries inside CRLF, UTF-8 sequences, JSON strings
  split_delay_ms  wait between consecutive pieces (without `split` a piece is one SSE event, so
                  this paces a stream)
  after           what happens once `cut_after` body bytes (default 0) are written, instead of the
                  rest of the body:
                    "reset"    abort the connection with a TCP RST (SO_LINGER 0)
                    "stall"    send nothing more for `stall_ms` (default 30000), then close
                    "truncate" end cleanly: with chunked framing send the terminating chunk
                               (the HTTP message is well formed, the stream inside it is cut)
                               and keep the connection; otherwise close it (a Content-Length
                               body that comes up short, or an early EOF)
  cut_after       body bytes written before `after` (not counting chunk framing)
  stall_ms        see `after`
  description     ignored (a note about the entry)
"""

import argparse
import json
import math
import os
import re
import signal
import socket
import struct
import sys
import threading
import time
import traceback

SCENARIO_NAME = re.compile(r"[a-z0-9-]+")
MAX_HEAD_BYTES = 64 * 1024  # request line and headers
MAX_REQUEST_BODY = 64 * 1024 * 1024
PIECE_BYTES = 64 * 1024  # how much of a generated or file body is written at once
IDLE_TIMEOUT_S = 300  # an idle keep-alive connection is dropped after this

ENTRY_MEMBERS = {
    "status", "headers", "delay_ms", "body", "body_json", "body_file", "sse", "huge", "sse_eol",
    "framing", "split", "split_delay_ms", "after", "cut_after", "stall_ms", "description",
}
BODY_KINDS = ("body", "body_json", "body_file", "sse", "huge")
REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 408: "Request Timeout", 413: "Content Too Large",
    422: "Unprocessable Entity", 429: "Too Many Requests", 500: "Internal Server Error",
    502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 529: "Overloaded",
}


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class ScenarioError(Exception):
    """A capture file that cannot be served; the message names the file and the member."""


class BadRequest(Exception):
    """A request the server cannot parse; answered with 400 and the connection closed."""


# --- scenario files ------------------------------------------------------------------------------


class Entry:
    """One validated response entry, ready to be written any number of times."""

    def __init__(self, raw, where, captures):
        def bad(member, problem):
            raise ScenarioError(f"{where}.{member}: {problem}")

        def number(member, default):
            value = raw.get(member, default)
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value) or value < 0):
                bad(member, "must be a non-negative number")
            return value

        def integer(member, default, minimum):
            value = raw.get(member, default)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                bad(member, f"must be an integer >= {minimum}")
            return value

        if not isinstance(raw, dict):
            raise ScenarioError(f"{where}: must be an object")
        for member in raw:
            if member not in ENTRY_MEMBERS:
                bad(member, "unknown member")
        kinds = [k for k in BODY_KINDS if k in raw]
        if len(kinds) > 1:
            bad(kinds[1], f"only one body kind is allowed (also {kinds[0]})")
        self.kind = kinds[0] if kinds else None

        self.status = integer("status", 200, 100)
        if self.status > 999:
            bad("status", "must be a three-digit code")
        self.delay_ms = number("delay_ms", 0)
        self.split = integer("split", 0, 1) if "split" in raw else 0
        self.split_delay_ms = number("split_delay_ms", 0)
        self.cut_after = integer("cut_after", 0, 0)
        self.stall_ms = number("stall_ms", 30000)
        self.after = raw.get("after")
        if self.after not in (None, "reset", "stall", "truncate"):
            bad("after", "must be reset, stall or truncate")
        self.framing = raw.get("framing", "chunked" if self.kind == "sse" else "length")
        if self.framing not in ("length", "chunked", "close"):
            bad("framing", "must be length, chunked or close")
        eol = raw.get("sse_eol", "\n")
        if eol not in ("\n", "\r\n", "\r"):
            bad("sse_eol", "must be \\n, \\r\\n or \\r")

        headers = raw.get("headers", {})
        if not isinstance(headers, dict):
            bad("headers", "must be an object")
        self.headers = []
        for name, value in headers.items():
            if not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", name):
                bad(f"headers.{name}", "is not a valid header name")
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                bad(f"headers.{name}", "must be a string or a number")
            value = str(value)
            if "\r" in value or "\n" in value:
                bad(f"headers.{name}", "must not contain a line break")
            self.headers.append((name, value))
        if not any(n.lower() == "content-type" for n, _ in self.headers):
            content_type = "text/event-stream" if self.kind == "sse" else "application/json"
            self.headers.insert(0, ("Content-Type", content_type))

        # The body: either bytes held here (small bodies) or a generator factory and its length.
        self.data = b""
        self.file = None
        self.huge = None
        if self.kind == "body":
            if not isinstance(raw["body"], str):
                bad("body", "must be a string")
            self.data = raw["body"].encode()
        elif self.kind == "body_json":
            self.data = compact(raw["body_json"]).encode()
        elif self.kind == "body_file":
            self.file = self._body_file(raw["body_file"], captures, bad)
        elif self.kind == "sse":
            self.data = self._render_sse(raw["sse"], eol, bad)
        elif self.kind == "huge":
            self.huge = self._huge(raw["huge"], bad)
        if self.file is not None:
            self.length = os.path.getsize(self.file)
        elif self.huge is not None:
            self.length = self.huge[3]
        else:
            self.length = len(self.data)

    @staticmethod
    def _body_file(path, captures, bad):
        if not isinstance(path, str) or not path:
            bad("body_file", "must be a non-empty path")
        root = os.path.realpath(captures)
        full = os.path.realpath(os.path.join(root, path))
        if os.path.commonpath([root, full]) != root:
            bad("body_file", "must stay inside the captures directory")
        if not os.path.isfile(full):
            bad("body_file", f"no such file: {path}")
        return full

    @staticmethod
    def _render_sse(events, eol, bad):
        if not isinstance(events, list):
            bad("sse", "must be an array")
        out = []
        for i, event in enumerate(events):
            at = f"sse[{i}]"
            if not isinstance(event, dict):
                bad(at, "must be an object")
            if "raw" in event:
                if set(event) != {"raw"} or not isinstance(event["raw"], str):
                    bad(at, "a raw entry is {\"raw\": string} alone")
                out.append(event["raw"])
                continue
            for member in event:
                if member not in ("event", "id", "data"):
                    bad(f"{at}.{member}", "unknown member")
            if "data" not in event:
                bad(f"{at}.data", "is required")
            frame = []
            for field in ("event", "id"):
                if field in event:
                    value = event[field]
                    if not isinstance(value, str) or "\n" in value or "\r" in value:
                        bad(f"{at}.{field}", "must be a one-line string")
                    frame.append(f"{field}: {value}")
            data = event["data"]
            text = data if isinstance(data, str) else compact(data)
            frame.extend("data: " + line for line in text.replace("\r\n", "\n").split("\n"))
            out.append(eol.join(frame) + eol + eol)
        return "".join(out).encode()

    @staticmethod
    def _huge(spec, bad):
        if not isinstance(spec, dict) or not set(spec) <= {"prefix", "fill", "bytes", "suffix"}:
            bad("huge", "must be {prefix, fill, bytes, suffix?}")
        prefix, fill, suffix = spec.get("prefix", ""), spec.get("fill"), spec.get("suffix", "")
        total = spec.get("bytes")
        if not all(isinstance(s, str) for s in (prefix, suffix)):
            bad("huge", "prefix and suffix must be strings")
        if not isinstance(fill, str) or not fill:
            bad("huge.fill", "must be a non-empty string")
        prefix, fill, suffix = prefix.encode(), fill.encode(), suffix.encode()
        if (isinstance(total, bool) or not isinstance(total, int)
                or total < len(prefix) + len(suffix)):
            bad("huge.bytes", "must be an integer at least as long as prefix and suffix")
        return prefix, fill, suffix, total

    def pieces(self):
        """The body as the pieces to write, after `split` re-cuts them."""
        pieces = self._natural_pieces()
        return _resplit(pieces, self.split) if self.split else pieces

    def _natural_pieces(self):
        if self.file is not None:
            with open(self.file, "rb") as f:
                while block := f.read(PIECE_BYTES):
                    yield block
        elif self.huge is not None:
            prefix, fill, suffix, total = self.huge
            yield prefix
            remaining = total - len(prefix) - len(suffix)
            block = fill * max(1, PIECE_BYTES // len(fill))  # whole fills, so the pattern cycles
            while remaining > 0:
                piece = block[:remaining]
                remaining -= len(piece)
                yield piece
            yield suffix
        elif self.kind == "sse" and not self.split:
            # One piece per event (each frame ends with a blank line), as a streaming server
            # flushes them.
            yield from _sse_frames(self.data)
        elif self.data:
            for start in range(0, len(self.data), PIECE_BYTES):
                yield self.data[start : start + PIECE_BYTES]


def _sse_frames(data):
    start = 0
    for match in re.finditer(rb"(\r\n\r\n|\n\n|\r\r)", data):
        yield data[start : match.end()]
        start = match.end()
    if start < len(data):
        yield data[start:]


def _resplit(pieces, size):
    """Re-cuts a stream of pieces into pieces of exactly `size` bytes (the last may be shorter),
    copying each byte once however large the input pieces are."""
    pending = b""
    for piece in pieces:
        if pending:
            take = size - len(pending)
            pending, piece = pending + piece[:take], piece[take:]
            if len(pending) < size:
                continue
            yield pending
        whole = len(piece) - len(piece) % size
        for start in range(0, whole, size):
            yield piece[start : start + size]
        pending = piece[whole:]
    if pending:
        yield pending


def load_scenario(captures, name):
    """The entries of DIR/<name>.json, or None when there is no such file."""
    path = os.path.join(captures, name + ".json")
    if not os.path.isfile(path):
        return None
    where = name + ".json"
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ScenarioError(f"{where}: not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ScenarioError(f"{where}: must be an object")
    responses = doc.get("responses")
    if not isinstance(responses, list) or not responses:
        raise ScenarioError(f"{where}.responses: must be a non-empty array")
    return [Entry(raw, f"{where}.responses[{i}]", captures) for i, raw in enumerate(responses)]


# --- state shared by the connections --------------------------------------------------------------


class State:
    """The counters, the request log and the connection ids, under one lock."""

    def __init__(self, captures, log_path):
        self.captures = captures
        self.log_path = log_path
        self.lock = threading.Lock()
        self.counters = {}
        self.records = []
        self.connections = 0
        self.started = time.monotonic()

    def next_conn(self):
        with self.lock:
            self.connections += 1
            return self.connections

    def take(self, scenario):
        with self.lock:
            n = self.counters.get(scenario, 0)
            self.counters[scenario] = n + 1
            return n

    def record(self, entry):
        with self.lock:
            self.records.append(entry)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(compact(entry) + "\n")

    def reset(self):
        with self.lock:
            self.counters.clear()
            self.records.clear()

    def log_json(self):
        with self.lock:
            return compact(self.records).encode()


# --- one connection -------------------------------------------------------------------------------


class Request:
    """One parsed HTTP request."""

    def __init__(self, method, target, version, headers, body):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers  # lower-cased name -> value
        self.body = body

    def wants_close(self):
        tokens = [t.strip().lower() for t in self.headers.get("connection", "").split(",")]
        if self.version == "HTTP/1.0":
            return "keep-alive" not in tokens
        return "close" in tokens


def read_line(rfile, budget):
    line = rfile.readline(budget + 1)
    if len(line) > budget:
        raise BadRequest("request head too large")
    return line


def read_request(rfile, sock):
    """The next request on the connection, or None at a clean end of the connection."""
    budget = MAX_HEAD_BYTES
    line = read_line(rfile, budget)
    while line in (b"\r\n", b"\n"):  # tolerate blank lines between requests
        budget -= len(line)
        line = read_line(rfile, budget)
    if not line:
        return None
    budget -= len(line)
    parts = line.decode("latin-1").rstrip("\r\n").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest("malformed request line")
    method, target, version = parts
    headers = {}
    while True:
        line = read_line(rfile, budget)
        budget -= len(line)
        if not line:
            raise BadRequest("connection closed inside the request head")
        if line in (b"\r\n", b"\n"):
            break
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequest("malformed header line")
        name, value = name.lower(), value.strip()
        headers[name] = headers[name] + ", " + value if name in headers else value

    if headers.get("expect", "").lower() == "100-continue":
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = read_chunked(rfile)
    elif "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError:
            raise BadRequest("malformed Content-Length") from None
        if length < 0 or length > MAX_REQUEST_BODY:
            raise BadRequest("request body too large")
        body = rfile.read(length)
        if len(body) != length:
            raise BadRequest("connection closed inside the request body")
    else:
        body = b""
    return Request(method, target, version, headers, body)


def read_chunked(rfile):
    body = bytearray()
    while True:
        size_line = read_line(rfile, 1024)
        try:
            size = int(size_line.split(b";")[0].strip(), 16)
        except ValueError:
            raise BadRequest("malformed chunk size") from None
        if size == 0:
            while read_line(rfile, MAX_HEAD_BYTES) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return bytes(body)
        if len(body) + size > MAX_REQUEST_BODY:
            raise BadRequest("request body too large")
        chunk = rfile.read(size)
        if len(chunk) != size:
            raise BadRequest("connection closed inside a chunk")
        body += chunk
        read_line(rfile, 2)


class Connection:
    """One accepted TCP connection, served request after request on its own thread."""

    def __init__(self, sock, state):
        self.sock = sock
        self.state = state
        self.conn_id = state.next_conn()
        self.rfile = sock.makefile("rb")
        self.aborted = False

    def serve(self):
        try:
            while True:
                try:
                    request = read_request(self.rfile, self.sock)
                except BadRequest as e:
                    self.send_simple(400, "bad_request", str(e), close=True)
                    return
                if request is None:
                    return
                if not self.dispatch(request):
                    return
        except (OSError, ValueError):
            pass  # the client went away (reset, timeout, early close): nothing to answer
        except Exception:  # a bug here must not take the server down with it
            traceback.print_exc(file=sys.stderr)
        finally:
            self.close()

    def close(self):
        if self.aborted:
            return
        try:
            self.rfile.close()
            self.sock.close()
        except OSError:
            pass

    def dispatch(self, request):
        """Answers one request; False when the connection is to be closed."""
        path = request.target.split("?", 1)[0]
        close = request.wants_close()
        if path.startswith("/_"):
            return self.control(request, path, close)
        segment = path[1:].split("/", 1)[0] if path.startswith("/") else ""
        name = segment if SCENARIO_NAME.fullmatch(segment) else None
        record = {
            "scenario": name, "n": None, "method": request.method, "path": request.target,
            "headers": request.headers, "body": request.body.decode("utf-8", errors="replace"),
            "conn": self.conn_id, "t_ms": round((time.monotonic() - self.state.started) * 1000, 1),
        }
        try:
            entries = load_scenario(self.state.captures, name) if name else None
        except ScenarioError as e:
            self.state.record(record)
            print(f"wire_server: {e}", file=sys.stderr)
            return self.send_simple(500, "wire_server_error", str(e), close)
        if entries is None:
            self.state.record(record)
            return self.send_simple(404, "not_found", f"no scenario for {path}", close)
        n = self.state.take(name)
        record["n"] = n
        self.state.record(record)
        return self.send_entry(entries[min(n, len(entries) - 1)], close)

    def control(self, request, path, close):
        routes = {"/_reset": "POST", "/_log": "GET", "/_health": "GET"}
        if path not in routes:
            return self.send_simple(404, "not_found", f"no control endpoint {path}", close)
        if request.method != routes[path]:
            message = f"{path} takes {routes[path]}"
            return self.send_simple(405, "method_not_allowed", message, close)
        if path == "/_reset":
            self.state.reset()
            body = b'{"reset":true}'
        elif path == "/_log":
            body = self.state.log_json()
        else:
            body = b'{"ok":true}'
        return self.send_bytes(200, body, close)

    def send_simple(self, status, kind, message, close):
        body = compact({"error": {"type": kind, "message": message}}).encode()
        return self.send_bytes(status, body, close)

    def send_bytes(self, status, body, close):
        head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}",
                "Content-Type: application/json", f"Content-Length: {len(body)}"]
        if close:
            head.append("Connection: close")
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        return not close

    def send_entry(self, entry, close):
        if entry.delay_ms:
            time.sleep(entry.delay_ms / 1000)
        chunked = entry.framing == "chunked"
        if entry.framing == "close":
            close = True
        given = {name.lower() for name, _ in entry.headers}
        head = [f"HTTP/1.1 {entry.status} {REASONS.get(entry.status, 'Status')}"]
        head += [f"{name}: {value}" for name, value in entry.headers]
        if entry.framing == "length" and "content-length" not in given:
            head.append(f"Content-Length: {entry.length}")
        if chunked and "transfer-encoding" not in given:
            head.append("Transfer-Encoding: chunked")
        if close and "connection" not in given:
            head.append("Connection: close")
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())

        limit = entry.cut_after if entry.after else None
        written = 0
        first = True
        for piece in entry.pieces():
            if limit is not None:
                piece = piece[: max(0, limit - written)]
            if not piece:
                if limit is not None and written >= limit:
                    break
                continue
            if not first and entry.split_delay_ms:
                time.sleep(entry.split_delay_ms / 1000)
            first = False
            written += len(piece)
            self.sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
        return self.finish(entry, chunked, close)

    def finish(self, entry, chunked, close):
        if entry.after == "reset":
            self.reset()
            return False
        if entry.after == "stall":
            time.sleep(entry.stall_ms / 1000)
            return False
        if entry.after == "truncate" and not chunked:
            return False
        if chunked:
            self.sock.sendall(b"0\r\n\r\n")
        return not close

    def reset(self):
        """Closes with SO_LINGER 0, so the kernel sends RST instead of FIN."""
        self.aborted = True
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.rfile.close()  # the file holds a reference; the descriptor closes with the last
            self.sock.close()
        except OSError:
            pass


# --- the listener ---------------------------------------------------------------------------------


def watch_parent(parent):
    """Exits the whole process once its parent is no longer `parent` (it died, and the process
    was re-parented)."""
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.2)


def write_port_file(path, port):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{port}\n")
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description="Loopback server replaying provider captures.")
    parser.add_argument("--captures", required=True, help="directory of <scenario>.json files")
    parser.add_argument("--port-file", required=True, help="where to write the bound port")
    parser.add_argument("--log", help="append each request record to this file as a JSON line")
    parser.add_argument("--parent-pid", type=int,
                        help="the pid of the starting process (default: the parent at startup); "
                        "naming it closes the race of a parent that dies while Python starts")
    args = parser.parse_args()
    if not os.path.isdir(args.captures):
        parser.error(f"--captures: not a directory: {args.captures}")

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: os._exit(0))
    parent = args.parent_pid if args.parent_pid is not None else os.getppid()
    threading.Thread(target=watch_parent, args=(parent,), daemon=True).start()

    state = State(args.captures, args.log)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    write_port_file(args.port_file, listener.getsockname()[1])

    while True:
        sock, _ = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(IDLE_TIMEOUT_S)
        connection = Connection(sock, state)
        threading.Thread(target=connection.serve, daemon=True).start()


if __name__ == "__main__":
    main()
