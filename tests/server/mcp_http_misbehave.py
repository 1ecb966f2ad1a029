#!/usr/bin/env python3
"""An MCP server over Streamable HTTP that misbehaves on purpose, for the tests of Millforge's
HTTP transport. Python standard library only.

Usage: mcp_http_misbehave.py --mode MODE --port-file FILE [--log FILE] [--parent-pid PID]
                             [--token TOKEN]

Binds 127.0.0.1 on a free port and, once listening, writes the port to FILE (a temporary name,
then renamed). The endpoint is POST/DELETE /mcp; anything else is a 404. One thread per
connection. It exits on SIGTERM, and by itself once --parent-pid (else its parent) is gone.
--log FILE gets one line per event a test may look for:
  session <id>         a session was handed out (initialize)
  deleted <id>         the client ended it with DELETE
  answered <id>        the client answered one of the server's requests
  cancelled <id>       notifications/cancelled for request <id>
  refused <why>        a request was refused with 400 (no session id, a wrong one, no version)

Well behaved (--mode json, the default) it answers initialize (the requested version when it
knows it, else 2025-06-18; serverInfo {name: http-misbehave, version: 1.0.0}), ping, tools/list
and tools/call with application/json bodies, and notifications and answers with 202. After
initialize every request must carry the Mcp-Session-Id it handed out and an MCP-Protocol-Version
header equal to the version agreed, or it gets a 400. Tools: echo {text}, add {a, b}, sleep {ms}.

Modes:
  json          as above
  sse           every reply as text/event-stream: a priming event (id, empty data), a
                notifications/message, then the reply
  stateless     no session id is handed out (and none is asked for)
  noisy         sse, and before each tools/call reply a ping request to the client (id srv-N);
                the reply is sent only once the client's answer has arrived (within 5 s; else
                the reply is an error "the ping was not answered")
  status-500    initialize is answered HTTP 500 with a text body
  bad-session   the session id handed out holds a space
  hang-call     tools/call: the event stream opens (priming event) and then nothing comes
  garbage-sse   tools/call: an event whose data is not JSON
  short-sse     tools/call: an event stream with a notification only, then the end
  expire        tools/call: HTTP 404 (the session is gone)
  empty-call    tools/call: HTTP 200 with an empty body
  html-call     tools/call: HTTP 200, text/html, "<html>...</html>"
  huge-call     tools/call: a 70 MiB JSON body (Content-Length, streamed)
  auth          json, but every request must carry "Authorization: Bearer TOKEN" (--token); any
                other is answered HTTP 401 with a body that quotes the Authorization it got;
                with a query (/mcp?leak), initialize gets a JSON-RPC error that quotes it too
"""
import argparse
import http.server
import json
import os
import signal
import socketserver
import sys
import threading
import time
import uuid

VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
MODES = ["json", "sse", "stateless", "noisy", "status-500", "bad-session", "hang-call",
         "garbage-sse", "short-sse", "expire", "empty-call", "html-call", "huge-call", "auth"]
MiB = 1024 * 1024

ap = argparse.ArgumentParser(description="an MCP Streamable HTTP server that misbehaves")
ap.add_argument("--mode", default="json", choices=MODES)
ap.add_argument("--port-file", required=True)
ap.add_argument("--log")
ap.add_argument("--parent-pid", type=int)
ap.add_argument("--token", default="")
opt = ap.parse_args()
mode = opt.mode
lock = threading.Lock()
sessions = {}  # id -> agreed protocol version
answers = {}  # server request id -> threading.Event
srv_ids = iter(range(1, 1 << 62))


def log(line):
    sys.stderr.write(f"mcp_http_misbehave[{mode}]: {line}\n")
    if opt.log:
        with lock, open(opt.log, "a") as f:
            f.write(line + "\n")


def tool(name, args):
    if name == "echo" and isinstance(args.get("text"), str):
        return {"content": [{"type": "text", "text": args["text"]}]}
    if name == "add" and all(isinstance(args.get(k), (int, float)) for k in "ab"):
        return {"content": [{"type": "text", "text": json.dumps(args["a"] + args["b"])}]}
    if name == "sleep" and isinstance(args.get("ms"), int):
        time.sleep(args["ms"] / 1000)
        return {"content": [{"type": "text", "text": "slept"}]}
    return {"content": [{"type": "text", "text": "invalid arguments"}], "isError": True}


TOOLS = [
    {"name": "echo", "description": "Echo the text back",
     "inputSchema": {"type": "object", "required": ["text"], "additionalProperties": False,
                     "properties": {"text": {"type": "string", "description": "Text to echo"}}}},
    {"name": "add", "description": "Add two numbers",
     "inputSchema": {"type": "object", "required": ["a", "b"], "additionalProperties": False,
                     "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}},
    {"name": "sleep", "description": "Sleep ms milliseconds, then answer",
     "inputSchema": {"type": "object", "required": ["ms"],
                     "properties": {"ms": {"type": "integer", "minimum": 0}}}},
]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body=b"", ctype="application/json", headers=()):
        self.send_response(status)
        if body or status == 200:
            self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def refuse(self, why):
        log(f"refused {why}")
        self.reply(400, json.dumps({"error": why}).encode())

    def do_GET(self):
        self.reply(405 if self.path == "/mcp" else 404)

    def do_DELETE(self):
        if self.path != "/mcp":
            return self.reply(404)
        sid = self.headers.get("Mcp-Session-Id")
        with lock:
            known = sessions.pop(sid, None) is not None
        if known:
            log(f"deleted {sid}")
        self.reply(200 if known else 404)

    def do_POST(self):
        try:
            self.post()
        except OSError:  # the client hung up (a timeout, a cancel, a body too large)
            log("the client hung up")

    def post(self):
        path, _, query = self.path.partition("?")
        if path != "/mcp":
            return self.reply(404)
        got = self.headers.get("Authorization", "")
        if mode == "auth" and got != "Bearer " + opt.token:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            log("unauthorized")
            return self.reply(401, json.dumps({"error": "unauthorized", "got": got}).encode())
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        accept = self.headers.get("Accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            return self.refuse("Accept lacks application/json or text/event-stream")
        try:
            msg = json.loads(body)
        except ValueError:
            return self.reply(400, b'{"error":"not JSON"}')
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize" and mode == "auth" and query:
            return self.answer(msg, {"error": {"code": -32000,
                                               "message": "refused token " + got[len("Bearer "):]}})
        if method == "initialize":
            return self.initialize(msg)
        if mode != "stateless":
            sid = self.headers.get("Mcp-Session-Id")
            with lock:
                version = sessions.get(sid)
            if sid is None:
                return self.refuse("no Mcp-Session-Id")
            if version is None:
                return self.reply(404, b'{"error":"no such session"}')
            if self.headers.get("MCP-Protocol-Version") != version:
                return self.refuse("MCP-Protocol-Version is not " + version)
        if method is None:  # an answer to one of the server's requests
            log(f"answered {rid}")
            with lock:
                done = answers.get(rid)
            if done:
                done.set()
            return self.reply(202)
        if rid is None:  # a notification
            if method == "notifications/cancelled":
                log(f"cancelled {(msg.get('params') or {}).get('requestId')}")
            return self.reply(202)
        if method == "ping":
            return self.answer(msg, {"result": {}})
        if method == "tools/list":
            return self.answer(msg, {"result": {"tools": TOOLS}})
        if method == "tools/call":
            return self.call(msg)
        self.answer(msg, {"error": {"code": -32601, "message": "method not found"}})

    def initialize(self, msg):
        if mode == "status-500":
            return self.reply(500, b"internal trouble at the server", "text/plain")
        asked = (msg.get("params") or {}).get("protocolVersion")
        version = asked if asked in VERSIONS else "2025-06-18"
        headers = []
        if mode != "stateless":
            sid = "bad session" if mode == "bad-session" else uuid.uuid4().hex
            with lock:
                sessions[sid] = version
            log(f"session {sid}")
            headers.append(("Mcp-Session-Id", sid))
        self.answer(msg, {"result": {"protocolVersion": version, "capabilities": {"tools": {}},
                                     "serverInfo": {"name": "http-misbehave",
                                                    "version": "1.0.0"}}}, headers)

    def call(self, msg):
        p = msg.get("params") or {}
        if mode == "expire":
            return self.reply(404, b'{"error":"session expired"}')
        if mode == "empty-call":
            return self.reply(200)
        if mode == "html-call":
            return self.reply(200, b"<html><body>not here</body></html>", "text/html")
        if mode == "huge-call":
            return self.huge(msg)
        if mode in ("hang-call", "garbage-sse", "short-sse"):
            self.open_stream()
            if mode == "garbage-sse":
                self.event("this is not JSON {{{")
            elif mode == "short-sse":
                self.event(self.note("no reply follows"))
            else:
                time.sleep(60)
            return self.wfile.write(b"0\r\n\r\n")
        result = tool(p.get("name"), p.get("arguments") or {})
        if mode != "noisy":
            return self.answer(msg, {"result": result})
        self.open_stream()
        srv = f"srv-{next(srv_ids)}"
        done = threading.Event()
        with lock:
            answers[srv] = done
        self.event({"jsonrpc": "2.0", "id": srv, "method": "ping"})
        out = {"result": result} if done.wait(5) else {
            "error": {"code": -32000, "message": "the ping was not answered"}}
        self.event(dict(out, jsonrpc="2.0", id=msg["id"]))
        self.wfile.write(b"0\r\n\r\n")

    def note(self, text):
        return {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": text}}

    def answer(self, msg, out, headers=()):
        out = dict(out, jsonrpc="2.0", id=msg["id"])
        if mode not in ("sse", "noisy"):
            return self.reply(200, json.dumps(out).encode(), headers=headers)
        self.open_stream(headers)
        self.event(self.note("about to answer " + msg["method"]))
        self.event(out)
        self.wfile.write(b"0\r\n\r\n")

    def open_stream(self, headers=()):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.chunk(b"id: 0\ndata:\n\n")

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def event(self, data):
        text = data if isinstance(data, str) else json.dumps(data)
        self.chunk(b"event: message\ndata: " + text.encode() + b"\n\n")

    def huge(self, msg):
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(msg["id"]).encode() + \
            b',"result":{"content":[{"type":"text","text":"'
        tail = b'"}]}}'
        size = 70 * MiB
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(head) + size + len(tail)))
        self.end_headers()
        self.wfile.write(head)
        for _ in range(size // MiB):
            self.wfile.write(b"x" * MiB)
        self.wfile.write(tail)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def watch_parent(pid):
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        time.sleep(0.2)


server = Server(("127.0.0.1", 0), Handler)
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
threading.Thread(target=watch_parent, args=(opt.parent_pid or os.getppid(),), daemon=True).start()
with open(opt.port_file + ".tmp", "w") as f:
    f.write(f"{server.server_address[1]}\n")
os.replace(opt.port_file + ".tmp", opt.port_file)
server.serve_forever()
