"""A local OpenAI-compatible chat-completions server that replays scripted responses.

Standard library only (``http.server`` in a thread), bound to 127.0.0.1 on a free port::

    with FakeOpenAIServer([{"content": "hello"}, {"status": 429, "retry_after": 0.2}]) as srv:
        client = OpenAI(base_url=srv.url, api_key="x")

Each POST to ``/v1/chat/completions`` takes the next response spec (or ``default`` when the
queue is empty); ``GET /v1/models`` lists ``model``. Response specs:

- ``{"content": "text"}`` — a normal completion (with usage unless ``"usage": None``)
- ``{"tool_calls": [{"name": n, "arguments": {...} or "raw json"}], "content": None}``
- ``{"status": 429, "retry_after": 1}`` / ``{"status": 500}`` / any status, optional ``"body"``
- ``{"sleep": s, ...}`` — wait ``s`` seconds first (``{"hang": True}``: until the server stops)
- ``{"truncated": True}`` — promise a longer body than sent, then close the connection
- ``{"malformed": True}`` — status 200 with a body that is not JSON
- ``{"empty_choices": True}`` — status 200, ``choices: []``
- ``{"garbage": True}`` — status 200, a completion whose content is meaningless text

Received requests (parsed JSON bodies) are kept in ``requests``, their headers in
``request_headers`` (lower-case names), their arrival times in ``request_times``.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable

GARBAGE = "~~@@ 0x1F zq!! ]]]{{ ... lorem \u00bf\u00bf 42 42 42"


class FakeOpenAIServer:
    def __init__(self, responses: Iterable[dict] = (), *, default: dict | None = None,
                 model: str = "fake-model"):
        self.queue: list[dict] = list(responses)
        self.default = default
        self.model = model
        self.requests: list[dict] = []
        self.request_headers: list[dict] = []
        self.request_times: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "FakeOpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [
                        {"id": server.model, "object": "model", "created": 0, "owned_by": "fake"}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                spec = server._next(body, dict(self.headers))
                if spec.get("hang"):
                    server._stop.wait()
                    return
                if spec.get("sleep"):
                    if server._stop.wait(float(spec["sleep"])):
                        return
                self._respond(spec, body)

            # -------------------------------------------------------------- replies
            def _send(self, status: int, data: bytes, headers: dict | None = None,
                      content_length: int | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) if content_length is None else content_length))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _json(self, status: int, obj: Any, headers: dict | None = None) -> None:
                self._send(status, json.dumps(obj).encode(), headers)

            def _respond(self, spec: dict, body: dict) -> None:
                status = int(spec.get("status", 200))
                if status != 200:
                    headers = {}
                    if "retry_after" in spec:
                        headers["Retry-After"] = str(spec["retry_after"])
                    err = spec.get("body") or {"error": {"message": spec.get("message", f"scripted status {status}"),
                                                         "type": "server_error" if status >= 500 else "error"}}
                    self._json(status, err, headers)
                    return
                if spec.get("truncated"):
                    data = json.dumps(server._completion({"content": "This reply never ends"}, body)).encode()
                    self._send(200, data[: len(data) // 2], content_length=len(data))
                    self.close_connection = True
                    return
                if spec.get("malformed"):
                    self._send(200, b'{"id": "x", "choices": [ {"message": ')
                    return
                if spec.get("empty_choices"):
                    c = server._completion({"content": ""}, body)
                    c["choices"] = []
                    self._json(200, c)
                    return
                if spec.get("garbage"):
                    spec = {**spec, "content": GARBAGE}
                self._json(200, server._completion(spec, body))

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="fake-openai")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *responses: dict) -> None:
        with self._lock:
            self.queue.extend(responses)

    # ------------------------------------------------------------------ internals
    def _next(self, body: dict, headers: dict) -> dict:
        with self._lock:
            self.requests.append(body)
            self.request_headers.append({k.lower(): v for k, v in headers.items()})
            self.request_times.append(time.monotonic())
            if self.queue:
                return self.queue.pop(0)
        return self.default or {"status": 500, "message": "the fake server has no scripted response left"}

    def _completion(self, spec: dict, body: dict) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": spec.get("content")}
        finish = "stop"
        if spec.get("tool_calls"):
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": c["name"],
                              "arguments": c["arguments"] if isinstance(c.get("arguments"), str)
                              else json.dumps(c.get("arguments") or {})}}
                for i, c in enumerate(spec["tool_calls"])]
            finish = "tool_calls"
        out: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        }
        usage = spec.get("usage", "auto")
        if usage == "auto":
            usage = {"prompt_tokens": 100 + len(json.dumps(body.get("messages", []))) // 4,
                     "completion_tokens": 1 + len(spec.get("content") or "") // 4}
        if usage:
            usage = {**usage, "total_tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)}
            out["usage"] = usage
        return out
