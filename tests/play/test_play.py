"""``referee play`` without a browser: the person's seat as a transport behind the table, what
the page is told of a deal (never a tile the person's seats cannot see), the person's own time
control in the log, and who the server answers (the token, the Host header, the websocket's
Origin, 127.0.0.1 only).

The matches here are played in-process: the bots are scripted, and "the page" is a task that
reads the state the server would send and answers as a click would (:meth:`Person.answer`, with
an entry of the turn's ``legal`` list as the page gets it).  Every log they write is played
again by ``verify`` (conftest).  tests/play/test_play_browser.py plays through Chromium.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.base.clock import MAX_SECONDS, TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import scripted
from referee.conversation.house import BotSource
from referee.engine import refereed_variant, variant_names
from referee.engine.core.tiles import tile_name
from referee.matches.match import match_length, orientations, run_match
from referee.matches.spec import MatchSpec
from referee.play.run import page_info, render_page
from referee.play.seat import Person
from referee.play.server import PlayApp, start
from referee.records import records as R

GAMES = variant_names(refereed=True)


def spec_for(tmp_path: Path, variant_id: str, person: Bot, seat: int = 0, **extra: Any) -> tuple[MatchSpec, int]:
    """A one-deal-per-game match of ``variant_id``: the person and one scripted bot, the person in
    ``seat`` of the first seating; the spec and the person's bot index."""
    v = refereed_variant(variant_id)
    players = v.default_players
    opts = v.resolve_options(players, {})
    me = orientations(v, players, opts, 2)[0][seat]
    bots = [Bot("bot", ["scripted"])]
    bots.insert(me, person)
    deals, games = match_length(v, 4 if variant_id == "sport" else None, None)
    spec = MatchSpec(v, bots, players, opts, deals=deals, games=games, seed=7,
                     log_path=tmp_path / f"{variant_id}.jsonl", stderr_dir=tmp_path / "stderr", deal_limit=1, **extra)
    return spec, me


def hidden_now(person: Person) -> set[str]:
    """The tiles of the deal in play that the person's seats cannot see now: the other hands and
    the bazaar, as the report's reader has them."""
    view = person.view
    cur = view.cur
    if cur is None or view.live is None:
        return set()
    mine = set(view.live.mine)
    hidden = {tile_name(t) for s, hand in enumerate(cur.hands) if s not in mine for t in hand}
    return hidden | {tile_name(t) for t in cur.bazaar[cur.drawn:]}


async def a_page(person: Person, seen: list[dict[str, Any]], choose=lambda legal: legal[0]) -> None:
    """What a person at the page does: go on from every finished deal, answer every turn with
    ``choose(legal)``; every state it is sent is checked for tiles it must not see."""
    version = -1
    while True:
        await person.wait_change(version)
        version = person.version
        text = person.state()
        state = json.loads(text)
        seen.append(state)
        deal = state["deal"]
        if deal is not None and not state["finished"]:
            if deal.get("rows"):  # kolbasa: every row face down but for the tiles turned up so far (KB-15)
                turned: set[str] = set()
                for step in deal["steps"]:
                    if step["kind"] == "turn":
                        turned.add(step["tile"])
                    for row in step["hands"]:
                        assert all(t is None or t in turned for t in row), step
                    up = step.get("up")
                    if up is not None:
                        assert up in step["hands"][step["seat"]][-1:], step  # the tile turned up, at its row's right end
            else:
                leaked = {t for t in hidden_now(person) if f'"{t}"' in text}
                assert not leaked, f"the page is told tiles its seats cannot see: {sorted(leaked)}"
            assert all(t is None for t in deal["undealt"])
        if state["next"]:
            assert state["finished"]
            person.go_on()
        elif state["ask"] is not None:
            ask = state["ask"]
            assert person.answer(ask["turn"], choose(ask["legal"])) is None


async def play_in_process(spec: MatchSpec, person: Person, person_bot: Bot, choose=lambda legal: legal[0]):
    launch, _ = scripted({})
    seen: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a_page, person, seen, choose)
        result = await run_match(spec, BotSource(person.launcher(person_bot, launch)), person.watch(), handle_signals=False)
        nursery.cancel_scope.cancel()
    return result, seen


@pytest.mark.parametrize("variant_id", GAMES)
async def test_a_person_plays_a_match_of_every_game_and_sees_only_their_seats(tmp_path, variant_id):
    """Every game: the person's seat is a transport like any bot's, the match ends with its
    result, each deal is shown until the person goes on, the page never learns a hidden tile,
    and the log verifies (conftest)."""
    person_bot = Bot("ann", [], tc=TimeControl(move=MAX_SECONDS))
    spec, me = spec_for(tmp_path, variant_id, person_bot, seat=1)
    person = Person("ann", me)
    result, seen = await play_in_process(spec, person, person_bot)
    with result:
        summary = result.summary()
    assert not result.interrupted and [b.name for b in summary.bots] == [b.name for b in spec.bots]
    plays = [rec for _, rec, _ in R.read_records(spec.log_path) if isinstance(rec, R.Play)]
    deals = [rec for _, rec, _ in R.read_records(spec.log_path) if isinstance(rec, R.Deal) and rec.void is None]
    asked = [s for s in seen if s["ask"] is not None]
    assert asked, "the person was never asked"
    assert all(s["mine"] and s["ask"]["seat"] in s["mine"] for s in asked)
    # One bot at a table of four: the person holds two seats (pairs, or individuals opposite),
    # and sees both hands.
    assert all(len(s["mine"]) == spec.players // 2 for s in asked)
    if variant_id != "kolbasa":
        assert all(t is not None for s in asked for seat in s["mine"] for t in s["deal"]["steps"][-1]["hands"][seat])
    # Every finished deal was shown with its result and every hand left, then left behind.
    ends = [s for s in seen if s["finished"]]
    assert {(s["where"]["game"], s["where"]["orientation"], s["where"]["deal"]) for s in ends} == {(d.game, d.orientation, d.deal) for d in deals}
    for s in ends:
        last = s["deal"]["steps"][-1]
        assert last["kind"] == "end" and all(t is not None for hand in last["hands"] for t in hand)
    final = json.loads(person.state())  # the last deal stays on show, with nothing to go on to
    assert final["finished"] and not final["next"] and final["ask"] is None
    hello = next(rec for _, rec, _ in R.read_records(spec.log_path) if isinstance(rec, R.Hello) and rec.b == me)
    assert hello.limits is not None and hello.limits.move_ms == MAX_SECONDS * 1000  # no clock: a day, as the log says
    assert plays


async def test_the_person_gets_the_seat_asked_for_and_the_other_seatings_follow(tmp_path):
    person_bot = Bot("ann", [], tc=TimeControl(move=MAX_SECONDS))
    spec, me = spec_for(tmp_path, "draw", person_bot, seat=1)
    assert spec.bots[1] is person_bot
    person = Person("ann", me)
    _, seen = await play_in_process(spec, person, person_bot)
    seats = {(s["where"]["orientation"], s["ask"]["seat"]) for s in seen if s["ask"] is not None}
    assert seats == {(0, 1), (1, 0)}  # seat 1 first, then the other seating of the same deal


async def test_a_game_end_is_shown_with_the_deal_that_ended_it(tmp_path):
    person_bot = Bot("ann", [], tc=TimeControl(move=MAX_SECONDS))
    spec, me = spec_for(tmp_path, "draw", person_bot)
    person = Person("ann", me)
    _, seen = await play_in_process(spec, person, person_bot)
    ended = [s for s in seen if s["finished"] and s["game_end"] is not None]
    assert ended and "deal limit" in ended[-1]["game_end"]["reason"]


async def test_answers_that_are_not_the_open_question_are_refused(tmp_path):
    """A stale turn, an entry not in the legal list, a second answer, or an answer while the page
    shows a finished deal: refused in words, and nothing reaches the table."""
    person_bot = Bot("ann", [], tc=TimeControl(move=MAX_SECONDS))
    spec, me = spec_for(tmp_path, "draw", person_bot)
    person = Person("ann", me)
    refusals: list[str | None] = []

    def choose(legal: list[Any]) -> Any:
        ask = person.asking
        assert ask is not None
        refusals.append(person.answer(ask.turn.id + 1, legal[0]))
        refusals.append(person.answer(ask.turn.id, {"tile": [9, 9], "end": "left"}))
        refusals.append(person.answer(ask.turn.id, {**legal[0], "stop": True}))
        return legal[0]

    await play_in_process(spec, person, person_bot, choose)
    assert set(refusals) == {"that turn is over", "not one of the legal moves"}
    assert person.answer(1, {"tile": None}) == "that turn is over"  # the match is over: nothing is open


async def test_a_person_with_a_clock_times_out_like_a_bot(tmp_path, autojump_clock):
    """``--clock``: the person's own move limit, in the log's header, their hello and each turn;
    a person who does not answer in time faults (timeout) and a fresh seat takes over."""
    person_bot = Bot("ann", [], tc=TimeControl(move=2.0))
    spec, me = spec_for(tmp_path, "draw", person_bot)
    person = Person("ann", me, clocked=True)
    launch, _ = scripted({})
    result = await run_match(spec, BotSource(person.launcher(person_bot, launch)), person.watch(), handle_signals=False)
    result.close()
    records = [rec for _, rec, _ in R.read_records(spec.log_path)]
    header = records[0]
    assert isinstance(header, R.Header)
    assert header.bots[me].time_control is not None and header.bots[me].time_control.move == 2.0
    assert header.bots[1 - me].time_control is None and header.time_control.move == 5.0
    faults = [rec for rec in records if isinstance(rec, R.Fault)]
    assert [(f.kind, f.bot) for f in faults] == [("timeout", "ann")] * 2  # one deal in each seating
    assert len(person.seats) == 2 and all(seat.closed for seat in person.seats)  # the game ended with its one deal
    assert person.asking is None


async def test_the_person_without_a_clock_waits_as_long_as_it_takes(tmp_path, autojump_clock):
    """No clock: an hour of thought is no fault."""
    person_bot = Bot("ann", [], tc=TimeControl(move=MAX_SECONDS))
    spec, me = spec_for(tmp_path, "draw", person_bot)
    person = Person("ann", me)

    async def slow_page() -> None:
        while True:
            await person.wait_change(person.version)
            if person.view.finished:
                person.go_on()
            ask = person.asking
            if ask is not None and person.view.on_show() is person.view.live:
                await trio.sleep(3600)
                person.answer(ask.turn.id, ask.legal[0])

    launch, _ = scripted({})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(slow_page)
        result = await run_match(spec, BotSource(person.launcher(person_bot, launch)), person.watch(), handle_signals=False)
        nursery.cancel_scope.cancel()
    result.close()
    assert not [rec for _, rec, _ in R.read_records(spec.log_path) if isinstance(rec, R.Fault)]


async def test_no_page_for_the_grace_period_stops_the_match(tmp_path, autojump_clock):
    person = Person("ann", 0)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(person.keep_company, 30.0, scope)
            person.arrive()
            await trio.sleep(100)  # a page is open: no limit
            person.leave()
            await trio.sleep(29)
            person.arrive()  # back within the grace period
            person.leave()
            await trio.sleep(29)
            assert not person.abandoned
            await trio.sleep(2)
            raise AssertionError("the match went on with no page for longer than the grace period")
    assert person.abandoned and scope.cancelled_caught


# -- the server -------------------------------------------------------------------------------------


async def request(port: int, text: str) -> bytes:
    """Send ``text`` (CRLF line ends added) to the server and read its response head."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(text.replace("\n", "\r\n").encode())
        data = b""
        with trio.move_on_after(5):
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                data += chunk
        return data


def status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def get(path: str, host: str) -> str:
    return f"GET {path} HTTP/1.1\nHost: {host}\nConnection: close\n\n"


def upgrade(path: str, host: str, origin: str | None) -> str:
    return (f"GET {path} HTTP/1.1\nHost: {host}\nUpgrade: websocket\nConnection: Upgrade\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\n"
            "Sec-WebSocket-Version: 13\n" + (f"Origin: {origin}\n" if origin else "") + "\n")


def listening(port: int) -> list[str]:
    """The local addresses of the TCP sockets listening on ``port``, from /proc/net/tcp{,6}."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.append(address)
    return found


async def test_the_server_answers_only_the_token_its_own_host_and_its_own_page(tmp_path):
    person_bot = Bot("ann", [], tc=TimeControl(move=MAX_SECONDS))
    spec, me = spec_for(tmp_path, "draw", person_bot)
    person = Person("ann", me)
    token = "s3cret-token"
    app = PlayApp(person, token, render_page(page_info(spec, person)))
    async with trio.open_nursery() as nursery:
        port = await start(nursery, app)
        assert listening(port) == ["0100007F"]  # 127.0.0.1, and nothing on another address or IPv6
        host = f"127.0.0.1:{port}"
        page = await request(port, get(f"/{token}/", host))
        assert status(page) == 200 and b"content-security-policy: default-src 'none'" in page.lower()
        assert status(await request(port, get(f"/{token}/", f"localhost:{port}"))) == 200
        assert status(await request(port, get(f"/{token}/assets/replay.js", host))) == 200
        assert status(await request(port, get(f"/{token}/assets/play.js", host))) == 200
        for path in ("/", "/favicon.ico", f"/{token[:-1]}/", f"/{token}x/", "/assets/replay.js", f"/x/{token}/", "/ws"):
            assert status(await request(port, get(path, host))) == 403, path
        assert status(await request(port, get(f"/{token}/assets/../../pyproject.toml", host))) == 404
        assert status(await request(port, get(f"/{token}/nothing", host))) == 404
        # DNS rebinding: another name for 127.0.0.1 is refused, token or not.
        for other in (f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}", f"[::1]:{port}"):
            assert status(await request(port, get(f"/{token}/", other))) == 421, other
        assert status(await request(port, f"POST /{token}/ HTTP/1.1\nHost: {host}\nContent-Length: 0\nConnection: close\n\n")) == 405
        # The websocket: only from the page's own origin, and only with the token.
        assert status(await request(port, upgrade(f"/{token}/ws", host, f"http://{host}"))) == 101
        assert status(await request(port, upgrade(f"/{token}/ws", host, f"http://localhost:{port}"))) == 101
        for path, origin in ((f"/{token}/ws", "http://evil.example"), (f"/{token}/ws", None), (f"/{token}/ws", f"https://{host}"),
                             ("/ws", f"http://{host}"), (f"/{token}x/ws", f"http://{host}"), (f"/{token}/", f"http://{host}")):
            assert status(await request(port, upgrade(path, host, origin))) == 403, (path, origin)
        nursery.cancel_scope.cancel()


def test_no_browser_is_opened_that_would_take_the_terminal(monkeypatch):
    """Without --no-open a browser is opened beside the terminal, never one inside it."""
    import webbrowser

    from referee.play.run import open_in_browser

    opened: list[str] = []

    class Beside(webbrowser.BackgroundBrowser):
        def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
            opened.append(url)
            return True

    class Inside(webbrowser.GenericBrowser):
        def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
            raise AssertionError("a terminal browser was started")

    class Elinks(webbrowser.Elinks):
        def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
            raise AssertionError("a terminal browser was started")

    monkeypatch.setattr(webbrowser, "get", lambda using=None: Inside("lynx"))
    assert open_in_browser("http://127.0.0.1:1/t/") is False
    monkeypatch.setattr(webbrowser, "get", lambda using=None: Elinks("elinks"))
    assert open_in_browser("http://127.0.0.1:1/t/") is False
    monkeypatch.setattr(webbrowser, "get", lambda using=None: Beside("xdg-open"))
    assert open_in_browser("http://127.0.0.1:1/t/") is True and opened == ["http://127.0.0.1:1/t/"]


class PageSocket:
    """The page's websocket, spoken by hand (wsproto over a trio stream), as a hostile page
    would: any text frame it likes."""

    def __init__(self, stream: trio.SocketStream) -> None:
        from wsproto import ConnectionType, WSConnection

        self.stream = stream
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.closed: int | None = None
        self._texts: list[str] = []

    @classmethod
    async def open(cls, port: int, token: str) -> PageSocket:
        from wsproto.events import AcceptConnection, Request

        page = cls(await trio.open_tcp_stream("127.0.0.1", port))
        host = f"127.0.0.1:{port}"
        await page.stream.send_all(page.ws.send(Request(host=host, target=f"/{token}/ws", extra_headers=[(b"origin", f"http://{host}".encode())])))
        while True:
            page.ws.receive_data(await page.stream.receive_some(65536))
            for event in page.ws.events():
                assert isinstance(event, AcceptConnection), event
                return page

    async def send(self, text: str) -> None:
        from wsproto.events import TextMessage

        await self.stream.send_all(self.ws.send(TextMessage(data=text)))

    async def receive(self) -> dict[str, Any]:
        """The next message the server sends (a state or a refusal); fails the test on a close."""
        from wsproto.events import CloseConnection, TextMessage

        buffer = ""
        while True:
            data = await self.stream.receive_some(65536)
            assert data, "the server closed the connection"
            self.ws.receive_data(data)
            for event in self.ws.events():
                if isinstance(event, CloseConnection):
                    raise AssertionError(f"the server closed the page's socket ({event.code})")
                if isinstance(event, TextMessage):
                    buffer += event.data
                    if event.message_finished:
                        return json.loads(buffer)

    async def refusal(self) -> str:
        """The next refusal, skipping the states sent meanwhile."""
        while (reply := await self.receive())["type"] != "refused":
            pass
        return reply["why"]


async def hostile_page(page: PageSocket, person: Person) -> None:
    """What the test's hostile page sends once it is asked for a move, and what it must hear."""
    while (state := await page.receive())["type"] != "state" or state["ask"] is None:
        pass
    ask = state["ask"]
    await page.send("[" * 2000 + "]" * 2000)
    assert "nested deeper than" in await page.refusal()
    await page.send('{"a":' * 600 + "1" + "}" * 600)
    assert "nested deeper than" in await page.refusal()
    for turn in ("true", f"{ask['turn']}.0", f'"{ask["turn"]}"', "1.0", "null"):
        await page.send(f'{{"type": "play", "turn": {turn}, "move": {json.dumps(ask["legal"][0])}}}')
        assert await page.refusal() == "a turn id is an integer, as the turn gave it", turn
    assert person.asking is not None  # nothing reached the table
    await page.send(json.dumps({"type": "play", "turn": ask["turn"], "move": ask["legal"][0]}))
    while (state := await page.receive())["ask"] is not None and state["ask"]["turn"] == ask["turn"]:
        assert state["type"] == "state"
    assert state["type"] == "state"  # taken: the table moved on


async def test_a_deep_message_and_a_turn_id_that_is_no_integer_are_refused_by_the_server(tmp_path):
    """A hostile page, through the real server: 4,000 bytes nested 2,000 deep (a RecursionError
    once, and the socket closed with 1011) get one refusal and the socket stays open; a turn id
    of ``true``, ``1.0`` or ``"1"`` (taken as turn 1 once) is refused; then the real answer is
    taken."""
    person_bot = Bot("ann", [], tc=TimeControl(move=MAX_SECONDS))
    spec, me = spec_for(tmp_path, "draw", person_bot)
    person = Person("ann", me)
    token = "s3cret-token"
    app = PlayApp(person, token, render_page(page_info(spec, person)))
    launch, _ = scripted({})
    async with trio.open_nursery() as nursery:
        port = await start(nursery, app)
        nursery.start_soon(lambda: run_match(spec, BotSource(person.launcher(person_bot, launch)), person.watch(),
                                             handle_signals=False))
        page = await PageSocket.open(port, token)
        with trio.fail_after(60):
            async with page.stream:
                await hostile_page(page, person)
        nursery.cancel_scope.cancel()


async def test_at_the_match_end_the_last_deal_offers_no_next_deal(tmp_path):
    """Issue 40: once the match was over the page still said "Go on to the next deal" with a
    `next deal ›` button under the last deal."""
    person_bot = Bot("ann", [], tc=TimeControl(move=MAX_SECONDS))
    spec, me = spec_for(tmp_path, "draw", person_bot)  # one deal a game: a deal in each of 2 seatings
    person = Person("ann", me)
    launch, _ = scripted({})
    finished: list[tuple] = []

    async def page() -> None:  # goes on from every deal but the last, then looks at it
        version = -1
        while True:
            await person.wait_change(version)
            version = person.version
            state = json.loads(person.state())
            if state["finished"] and tuple(state["where"].values()) not in finished:
                finished.append(tuple(state["where"].values()))
                if len(finished) < 2:
                    person.go_on()
            elif state["ask"] is not None:
                assert person.answer(state["ask"]["turn"], state["ask"]["legal"][0]) is None

    async with trio.open_nursery() as nursery:
        nursery.start_soon(page)
        result = await run_match(spec, BotSource(person.launcher(person_bot, launch)), person.watch(), handle_signals=False)
        nursery.cancel_scope.cancel()
    result.close()
    before = json.loads(person.state())
    assert before["finished"] and before["next"]  # the match's end not yet told: the page may still go on
    person.end(["The match is over"], interrupted=False)
    state = json.loads(person.state())
    assert len(finished) == 2 and state["finished"] and state["over"] is not None
    assert not state["next"] and state["waiting"] == 0
