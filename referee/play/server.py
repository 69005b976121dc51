"""The web server of ``referee play``: the page, its assets and its websocket, for one person.

An ASGI application served by Hypercorn's trio worker (:func:`serve`), in the trio loop the
match itself runs in: the page's answers reach the table as plain function calls, with no
thread and no second event loop.  (trio-websocket alone speaks only the websocket, so the page
and its scripts would need a second server; Hypercorn serves both, with no web framework.)

Who may talk to it:

* it listens on 127.0.0.1 only, on a port the system picks;
* every request names the match's secret token as the first part of its path
  (``/TOKEN/``, ``/TOKEN/assets/…``, ``/TOKEN/ws``); any other path is refused (403);
* its ``Host`` header must name 127.0.0.1 or localhost at that port, so that a page of another
  site whose name a resolver points at 127.0.0.1 (DNS rebinding) is refused (421);
* the websocket must come from the page itself (its ``Origin``), so no other site's page can
  open it from the person's browser (403);
* the page loads nothing but its own assets (a Content-Security-Policy says so to the browser);
  nothing anywhere is fetched from the internet.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

import trio

from protocol import messages as m
from referee.play.seat import Person

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

#: The page's assets, served from the web report's static folder: the report's own stylesheet,
#: tiles and renderers, and the live table's script and styles.
ASSETS = {"style.css": "text/css", "site.js": "text/javascript", "replay.js": "text/javascript",
          "play.js": "text/javascript", "play.css": "text/css"}
#: The longest message the page may send (a move is a few dozen bytes).
MAX_MESSAGE = 4096


class PlayApp:
    """The ASGI application: ``page`` at ``/TOKEN/``, the assets, and the websocket that carries
    the table to the page and the person's moves back (:class:`~referee.play.seat.Person`)."""

    def __init__(self, person: Person, token: str, page: bytes) -> None:
        self.person = person
        self.token = token
        self.page = page
        self.port: int | None = None  # known once the socket is bound: until then nothing is served
        static = resources.files("referee.web") / "static"
        self.assets = {name: (static / name).read_bytes() for name in ASSETS}

    # -- who may ask ----------------------------------------------------------------------------

    def _hosts(self) -> set[bytes]:
        return {f"{host}:{self.port}".encode() for host in ("127.0.0.1", "localhost")}

    def _origins(self) -> set[bytes]:
        return {b"http://" + host for host in self._hosts()}

    @staticmethod
    def _header(scope: Scope, name: bytes) -> bytes | None:
        values = [v for k, v in scope["headers"] if k.lower() == name]
        return values[0] if len(values) == 1 else None  # two Host headers are as good as none

    def _refusal(self, scope: Scope, websocket: bool) -> tuple[int, str] | None:
        """Why the request is refused (status, words), or ``None`` when it may go on."""
        if self.port is None or self._header(scope, b"host") not in self._hosts():
            return 421, "this server answers only to 127.0.0.1 and localhost at its own port"
        first, _, _ = scope["path"].lstrip("/").partition("/")
        if not secrets.compare_digest(first.encode(), self.token.encode()):
            return 403, "the address must carry the match's token: use the one referee play printed"
        if websocket and self._header(scope, b"origin") not in self._origins():
            return 403, "the table's websocket opens only from its own page"
        return None

    # -- ASGI ------------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "http":
            await self._http(scope, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)

    @staticmethod
    async def _lifespan(receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, send: Send) -> None:
        refused = self._refusal(scope, websocket=False)
        if refused is not None:
            await _respond(send, refused[0], refused[1].encode() + b"\n", "text/plain; charset=utf-8")
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 405, b"the table only shows pages\n", "text/plain; charset=utf-8")
            return
        rest = scope["path"].lstrip("/").partition("/")[2]
        if rest == "":
            body, kind = self.page, "text/html; charset=utf-8"
        elif rest.startswith("assets/") and rest[7:] in ASSETS:
            body, kind = self.assets[rest[7:]], ASSETS[rest[7:]] + "; charset=utf-8"
        else:
            await _respond(send, 404, b"no such page\n", "text/plain; charset=utf-8")
            return
        await _respond(send, 200, b"" if scope["method"] == "HEAD" else body, kind, csp=self._csp())

    def _csp(self) -> str:
        sockets = " ".join(f"ws://{h.decode()}" for h in sorted(self._hosts()))
        return ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                f"connect-src 'self' {sockets}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        connect = await receive()
        if connect["type"] != "websocket.connect":
            return
        refused = self._refusal(scope, websocket=True)
        if refused is not None or scope["path"].lstrip("/").partition("/")[2] != "ws":
            await send({"type": "websocket.close", "code": 1008})  # before accepting: an HTTP 403
            return
        await send({"type": "websocket.accept"})
        person = self.person
        person.arrive()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._states, send)
                while True:
                    message = await receive()
                    if message["type"] == "websocket.disconnect":
                        break
                    if message["type"] == "websocket.receive":
                        reply = self._take(message.get("text"))
                        if reply is not None:
                            await send({"type": "websocket.send", "text": json.dumps(reply)})
                nursery.cancel_scope.cancel()
        finally:
            person.leave()

    async def _states(self, send: Send) -> None:
        """Send the page the table whenever it changes (the latest state only: a slow page skips
        the ones it missed)."""
        person = self.person
        sent = -1
        while True:
            version = person.version
            if version != sent:
                await send({"type": "websocket.send", "text": person.state()})
                sent = version
                person.told(version)
            await person.wait_change(sent)

    def _take(self, text: str | None) -> dict[str, Any] | None:
        """A message from the page: a move (``{"type": "play", "turn": id, "move": entry}``) or
        going on to the next deal (``{"type": "next"}``); the answer to send back, if any."""
        if not isinstance(text, str) or len(text) > MAX_MESSAGE:
            return {"type": "refused", "why": "a message the table does not read"}
        if m.too_deep(text.encode()):  # as a bot's line: never handed to a recursive parser
            return {"type": "refused", "why": f"a message nested deeper than {m.MAX_DEPTH} levels"}
        try:
            message = json.loads(text)
        except ValueError:
            return {"type": "refused", "why": "a message the table does not read"}
        if not isinstance(message, dict):
            return {"type": "refused", "why": "a message the table does not read"}
        if message.get("type") == "next":
            self.person.go_on()
            return None
        if message.get("type") == "play":
            why = self.person.answer(message.get("turn"), message.get("move"))
            return None if why is None else {"type": "refused", "why": why}
        return {"type": "refused", "why": "a message the table does not read"}


async def _respond(send: Send, status: int, body: bytes, kind: str, csp: str | None = None) -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store"),
               (b"referrer-policy", b"no-referrer"), (b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY")]
    if csp is not None:
        headers.append((b"content-security-policy", csp.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def start(nursery: trio.Nursery, app: PlayApp) -> int:
    """Serve ``app`` on 127.0.0.1, on a port the system picks, in ``nursery`` (until it is
    cancelled); the port, once listening."""
    from functools import partial

    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.loglevel = "WARNING"  # not its "Running on …" line: that address lacks the token
    config.graceful_timeout = 1.0
    config.include_server_header = False
    binds = await nursery.start(partial(serve, app, config))  # type: ignore[arg-type]  # ASGI's types, not hypercorn's
    app.port = int(binds[0].rsplit(":", 1)[1])
    return app.port
