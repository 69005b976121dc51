"""``referee play``'s match: the server, the page, the browser, and the match itself, with a
person in one seat.

The match is :func:`referee.matches.match.run_match`'s, with one more kind of transport for the person's
seats (:mod:`referee.play.seat`): its log is written, and verifies, as any match's.  Around it,
the server (:mod:`referee.play.server`) shows the page for as long as the match lasts, and a
watch ends the match as interrupted once no page has been open for the grace period.
"""

from __future__ import annotations

import secrets
import webbrowser
from collections.abc import Callable
from typing import Any

import trio

from referee.base.runqueue import run_queue
from referee.bots.bot import Bot
from referee.conversation.house import BotSource
from referee.matches.match import orientations, run_match
from referee.matches.results import MatchResult
from referee.matches.spec import MatchSpec
from referee.play.seat import Person
from referee.play.server import PlayApp, start
from referee.sides import side_of
from referee.web.data import verdict


class Abandoned(Exception):
    """No page was open for the grace period, so the match was stopped: its log says
    ``interrupted``, its bots are ended."""


def page_info(spec: MatchSpec, person: Person) -> dict[str, Any]:
    """The page's facts that never change during the match (the page's ``doc``)."""
    v = spec.variant
    return {
        "kind": "play", "variant": v.id, "title": v.title, "layout": side_of(v, spec.players, spec.options).layout, "players": spec.players,
        "bots": [b.name for b in spec.bots], "me": person.me, "you": person.name,
        "seatings": [list(s) for s in orientations(v, spec.players, spec.options, len(spec.bots))],
        "games": spec.games or 1, "deals": spec.deals, "to_target": v.to_target, "clocked": person.clocked,
    }


def render_page(info: dict[str, Any]) -> bytes:
    from referee.web.site import env

    return env().get_template("play.html").render(doc=info).encode()


def open_in_browser(url: str) -> bool:
    """Open ``url`` in the person's web browser, if one can show it beside this terminal; whether
    one was asked to.  A browser that may run inside this terminal (lynx, w3m, elinks, or a
    command named by $BROWSER, which Python waits for) is not started: it would take the
    terminal over, or hold the match up until it ends; the person opens the address printed."""
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    if not isinstance(browser, webbrowser.BackgroundBrowser):
        if isinstance(browser, webbrowser.GenericBrowser):
            return False
        if isinstance(browser, webbrowser.UnixBrowser) and not browser.background:
            return False
    return browser.open(url)


async def play_match(spec: MatchSpec, person: Person, bot: Bot, *, grace: float, announce: Callable[[str, bool], None],
                     open_browser: bool = True, progress: Callable[[str, int], None] | None = None,
                     on_board: Callable[[MatchResult], None] | None = None) -> MatchResult:
    """Play ``spec`` with ``person`` as ``bot`` (one of ``spec.bots``): serve the page, open it
    in a browser unless told not to, tell ``announce`` its address (with the token) and whether
    a browser was opened, and play.

    Raises:
        Abandoned: no page was open for ``grace`` seconds.
        Terminated, BotStartError, BadDeal, LogError: as :func:`~referee.matches.match.run_match`.
    """
    token = secrets.token_urlsafe(24)
    app = PlayApp(person, token, render_page(page_info(spec, person)))
    async with trio.open_nursery() as nursery:
        port = await start(nursery, app)
        url = f"http://127.0.0.1:{port}/{token}/"
        opened = open_browser and await trio.to_thread.run_sync(open_in_browser, url, abandon_on_cancel=True)
        announce(url, opened)
        match_scope = trio.CancelScope()
        nursery.start_soon(person.keep_company, grace, match_scope)
        result: MatchResult | None = None
        try:
            with match_scope:
                # Lockstep: the person plays every seating of a deal before the next deal.
                result = await run_match(spec, BotSource(person.launcher(bot), waits=run_queue), person.watch(progress, on_board), lockstep=True)
        except BaseException:
            person.end(["The match was interrupted (Ctrl-C): the log so far is kept."], interrupted=True)
            with trio.CancelScope(shield=True), trio.move_on_after(1.0):
                await person.shown()
            raise
        if result is None:  # the grace period ran out
            raise Abandoned(f"no page was open for {grace:g} s")
        v = verdict(result.summary())
        person.end([*v["verdict"], *v["margin"]], interrupted=False)
        with trio.move_on_after(2.0):
            await person.shown()
        nursery.cancel_scope.cancel()
    return result
