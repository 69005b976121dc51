"""One game played for learners: the engine's deals, the side's messages to every seat, and the
rewards, driven one move at a time (the PettingZoo, Gymnasium and bot front doors all use it).

:class:`EnvTable` deals from the seeded stream ``referee match --seed`` uses (the keyed
``blake2b`` derivation), plays a deal or a whole game, and keeps for every seat a
:class:`protocol.bot.State` fed with the very lines the referee would send that seat (the side's
``deal``, events, ``turn`` and ``deal_end`` messages, decoded).  Observations are made from those
states only, so they hold nothing the protocol does not tell the seat.

Rewards (``reward=``):

* ``"points"`` (the default): at the end of each deal, every seat gets what its side wrote in
  that deal times the game's sense (+1 where points are good, -1 for the penalty games: kozel's
  family), as the match runner counts a bot's *net*;
* ``"margin"``: that less the mean of the other sides' (zero-sum; the match runner's *margin*);
* ``"games"``: the match points, the game's result as the match counts it for the seat's side
  (``games_won``, ``games_drawn``, ``games_lost``): +1 won, 0 drawn, -1 lost, paid at the end of
  the deal that ends the game and 0 at the end of every other deal (in the penalty games a side
  loses as a goat; a game every side won or lost is drawn for all, as docs/result-json.md says).

A move the mask does not allow is a fault, as a bot's illegal play is for the referee: the deal
ends at once as that seat's side's loss (the game's own fault scoring).
"""

from __future__ import annotations

import copy
import secrets
from typing import Any

from protocol import messages as m
from protocol.bot import State
from referee.engine.core.deal import Deal, deal_from_seed
from referee.engine.core.game import DealRecord, Game
from referee.engine.core.line import TERMINAL, Play
from referee.engine.core.shuffle import BLAKE2B, GAME_STRIDE
from referee.engine.core.state import DealState
from referee.envs.codec import Codec, codec_for
from referee.sides.base import deal_end, game_end

REWARDS = ("points", "margin", "games")
EPISODES = ("deal", "game")
#: a seed of the deal stream is below this (``referee match --seed`` takes the same range)
SEED_LIMIT = 2**63


class EnvTable:
    """A game in progress, one move at a time, with every seat's view kept as its messages."""

    def __init__(self, game: str, players: int | None = None, options: dict[str, Any] | None = None, *,
                 reward: str = "points", episode: str = "deal", outbox: tuple[int, ...] = ()) -> None:
        if reward not in REWARDS:
            raise ValueError(f"reward={reward!r}: choose one of {', '.join(REWARDS)}")
        if episode not in EPISODES:
            raise ValueError(f"episode={episode!r}: choose one of {', '.join(EPISODES)}")
        from referee.engine.registry import variant

        v = variant(game)
        n = v.default_players if players is None else players
        opts = v.resolve_options(n, options)
        self.codec: Codec = codec_for(game, n, opts)
        self.variant = v
        self.players = n
        self.options = opts
        self.reward = reward
        self.episode = episode
        self.seed: int | None = None
        self.cursor = 0  # the next deal of the stream
        self.game: Game | None = None
        self.state: DealState | None = None
        self.views: list[State] = []
        self.turn: m.Turn | None = None  # the turn of the seat to move, as it would be sent
        self._legal: list[Play] = []
        self._by_action: dict[int, Play] = {}
        self._seen = 0  # events of the deal already told
        self.last: DealRecord | None = None
        self.deals = 0  # deals finished since the last new game
        self.games = 0  # games begun
        self.of_stream = 0  # games begun since the stream's seed was set
        self.faulted: int | None = None  # the seat whose illegal move ended the last deal
        #: rewards of deals the engine played to their end with no decision, paid with the next move's
        self.carry: list[float] = [0.0] * self.players
        self._decoded: dict[bytes, m.ToBotMessage] = {}
        #: the seats whose lines are kept as bytes, as the referee would send them (bots played
        #: through the protocol): ``outbox[seat]`` gathers them until the seat's driver takes them
        self.outbox: dict[int, list[bytes]] = {seat: [] for seat in outbox}

    def __deepcopy__(self, memo: dict[int, Any]) -> EnvTable:
        """A copy that plays on alone (OpenSpiel clones a state at every step): the deal by the
        engine's own copy, the game around it, every seat's view with its lists; the codec, the
        messages (never changed once decoded) and the plays are shared."""
        other = copy.copy(self)
        memo[id(self)] = other
        state = self.state
        other.state = None if state is None else state.copy()
        if self.game is not None:
            other.game = copy.deepcopy(self.game, {id(self.variant): self.variant, id(state): other.state, id(self.options): self.options})
        other.views = [_view_copy(v) for v in self.views]
        other._by_action = dict(self._by_action)
        other._legal = list(self._legal)
        other.outbox = {seat: list(box) for seat, box in self.outbox.items()}
        return other

    # -- games and deals ---------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> None:
        """The next episode: with ``seed``, a new game from deal 0 of that seed's stream; without,
        the game's next deal (``episode="deal"``, the last deal finished) or a new game, from
        where the last one's deals ended (a fresh secret seed the first time none is given)."""
        game, state = self.game, self.state
        finished = state is not None and state.end is not None  # a deal left unfinished is abandoned with its game
        if seed is None and game is not None and finished and game.outcome() is None and self.episode == "deal":
            self._start_deal()
        else:
            self.new_game(seed)
        while self.to_move is None:  # the game's last deals took no decision: the next game
            self.new_game()

    def new_game(self, seed: int | None = None) -> None:
        """Begin a game from deal 0 of ``seed``'s stream, or the next game of the stream, where a
        match's game would begin: game ``g`` of a game to a target deals from stream deal
        ``g * GAME_STRIDE`` (the ``blake2b-games`` derivation), and a game of a fixed number of
        deals (sport, mexican_train) at a multiple of it, as game ``g`` of a match takes deals
        ``g * per_game …`` (mexican_train's station depends on it)."""
        if seed is not None:
            if not 0 <= seed < SEED_LIMIT:
                raise ValueError(f"seed {seed} is out of range (0 <= seed < 2**63)")
            self.seed, self.cursor, self.of_stream = seed, 0, 0
        elif self.seed is None:
            self.seed, self.cursor, self.of_stream = secrets.randbelow(SEED_LIMIT), 0, 0
        else:
            self.of_stream += 1
        self.game = self.variant.new_game(self.players, self.options)
        self.games += 1
        self.carry = [0.0] * self.players
        per = self.game.default_deals
        if self.variant.to_target:
            self.cursor = self.of_stream * GAME_STRIDE  # as a match deals game g (blake2b-games)
        elif per:
            self.cursor = -(-self.cursor // per) * per
        self.game.keep_records = False
        self.deals = 0
        self.views = [State() for _ in range(self.players)]
        self._start_deal()

    def _start_deal(self) -> None:
        game = self.game
        assert game is not None and self.seed is not None
        while True:
            deal = deal_from_seed(self.seed, self.cursor, game.shape, BLAKE2B)
            self.cursor += 1
            state = game.start(deal)
            if state is None:
                continue  # void: the next deal of the stream, as a match takes it
            self._begin(deal, state)
            if state.end is None or game.outcome() is not None:
                return
            # the engine played this deal to its end with no decision (the forced lead, then
            # every seat blocked): it is scored, its rewards come with the next move's, and the
            # game goes on with its next deal (a game it ends leaves no one to move)

    def _score_now(self) -> None:
        """Score a deal that ended with no decision; its rewards wait in :attr:`carry`."""
        rewards = self._score()
        self.carry = [c + r for c, r in zip(self.carry, rewards)]

    def play_deal(self, deal: Deal) -> bool:
        """Begin a game with ``deal`` as its first deal (OpenSpiel's chance nodes deal it); False
        when the game's rules void it (a redeal), and then nothing is begun."""
        game = self.variant.new_game(self.players, self.options)
        game.keep_records = False
        state = game.start(deal)
        if state is None:
            return False
        self.game = game
        self.games += 1
        self.carry = [0.0] * self.players
        self.deals = 0
        self.views = [State() for _ in range(self.players)]
        self._begin(deal, state)
        return True

    def _begin(self, deal: Deal, state: DealState) -> None:
        game = self.game
        assert game is not None
        self.state = state
        self.faulted = None
        side = self.codec.side
        for seat, view in enumerate(self.views):
            msg = side.deal_start(game, deal, state, seat, self.games - 1)
            view.on_deal(msg)
            if seat in self.outbox:
                self.outbox[seat].append(m.encode_line(msg))
        self._seen = 0
        self._tell()
        if state.end is not None:
            self._score_now()

    def _decode(self, line: bytes) -> m.ToBotMessage:
        msg = self._decoded.get(line)
        if msg is None:
            msg = m.to_bot_decoder.decode(line)
            if len(self._decoded) < 8192:
                self._decoded[line] = msg
        return msg

    def _tell(self) -> None:
        """Send every seat the events since the last call, then the turn to the seat to move."""
        state = self.state
        assert state is not None
        history = state.history
        side = self.codec.side
        n = self.players
        views = self.views
        for event in history[self._seen:]:
            lines = side.event_lines(state, event, n)
            for seat, line in enumerate(lines):
                views[seat].hear(self._decode(line))
            if lines:  # mexican_train's station is told by the deal message, not an event
                for seat, box in self.outbox.items():
                    box.append(lines[seat])
        self._seen = len(history)
        public = side.public_turn(state)
        if public is not None:  # what the events do not say (kolbasa's rows): every seat not asked hears it now
            mover = state.turn
            for seat, view in enumerate(views):
                if seat != mover:
                    view.on_turn(public)
        if state.to_move() == TERMINAL:
            self.turn = None
            self._legal = []
            self._by_action = {}
            return
        turn = side.turn_message(state, 0)
        views[state.turn].on_turn(turn)
        self.turn = turn
        self._legal = state.legal_plays()
        action_of = self.codec.action_of
        self._by_action = {action_of(o): p for o, p in zip(turn.legal, self._legal)}

    # -- moves ---------------------------------------------------------------------------------

    @property
    def to_move(self) -> int | None:
        """The seat to move, ``None`` once the episode's deal is over."""
        state = self.state
        return None if state is None or state.turn == TERMINAL else state.turn

    def legal_actions(self) -> list[int]:
        """The actions of the turn's legal entries, in the turn's order."""
        return list(self._by_action)

    def turn_line(self, turn_id: int, time_ms: int) -> bytes:
        """The ``turn`` line the seat to move is sent, with the time it has and the turn's id."""
        state = self.state
        assert state is not None and self.turn is not None
        return m.encode_line(self.codec.side.turn_message(state, time_ms, None, turn_id))

    def play(self, action: int) -> tuple[list[float], bool]:
        """Make the seat to move play ``action``; the rewards this earned every seat, and whether
        the episode is over.  An action not in the mask ends the deal as that seat's fault."""
        state = self.state
        assert state is not None and state.turn != TERMINAL, "the deal is over"
        p = self._by_action.get(int(action))
        if p is None:
            return self.forfeit()
        state.apply(p)
        return self.moved()

    def forfeit(self) -> tuple[list[float], bool]:
        """The seat to move faulted: its deal ends as its side's loss (:meth:`play`'s answer)."""
        state = self.state
        assert state is not None and state.turn != TERMINAL, "the deal is over"
        self.faulted = state.turn
        state.forfeit(state.turn)
        return self.moved()

    def moved(self) -> tuple[list[float], bool]:
        """The seat to move has moved on the deal's state (here, or a bot program's play made by
        the conversation's turn): every seat is told, and :meth:`play`'s answer."""
        state = self.state
        assert state is not None
        self._tell()
        carry, self.carry = self.carry, [0.0] * self.players
        if state.end is None:
            return carry, False
        rewards = self._score()
        rewards = [c + r for c, r in zip(carry, rewards)]
        game = self.game
        assert game is not None
        if self.episode == "game" and game.outcome() is None:
            self._start_deal()
            if self.to_move is not None:
                return rewards, False
        rewards = [c + r for c, r in zip(self.carry, rewards)]
        self.carry = [0.0] * self.players
        return rewards, True

    def _score(self) -> list[float]:
        """Score the finished deal, tell every seat, and the rewards it earned."""
        game, state = self.game, self.state
        assert game is not None and state is not None
        rec = game.finish(state)
        self.last = rec
        self.deals += 1
        dealt = deal_end(rec)
        for view in self.views:
            view.on_deal_end(dealt)
        if self.outbox:
            line = m.encode_line(dealt)
            outcome = game.outcome()
            over = m.encode_line(game_end(outcome)) if outcome is not None else b""
            for box in self.outbox.values():
                box.append(line + over)
        return self.rewards(rec)

    def rewards(self, rec: DealRecord) -> list[float]:
        """Each seat's reward for a finished deal (see the module's docstring)."""
        game = self.game
        assert game is not None
        sense = self.variant.sense
        if self.reward == "games":
            outcome = game.outcome()
            if outcome is None:
                return [0.0] * self.players
            verdicts = outcome.verdicts([{side} for side in range(len(game.sides))], sense)
            return [float(verdicts[game.side_of[s]]) for s in range(self.players)]
        wrote: list[float] = [sense * w for w in rec.wrote]
        k = len(wrote)
        if self.reward == "margin" and k > 1:
            total = sum(wrote)
            wrote = [w - (total - w) / (k - 1) for w in wrote]
        return [float(wrote[game.side_of[s]]) for s in range(self.players)]

    # -- views ---------------------------------------------------------------------------------

    def observe(self, seat: int) -> Any:
        view = self.views[seat]
        turn = self.turn if self.to_move == seat else None
        count = None if turn is None or turn.count is m.UNSET else turn.count
        return self.codec.observe(view, self.to_move, continuing=turn is not None and turn.continuing is True, count=count)

    def mask(self, seat: int) -> Any:
        import numpy as np

        out = np.zeros(self.codec.actions, np.int8)
        if self.to_move == seat:
            out[list(self._by_action)] = 1
        return out

    def text(self) -> str:
        """The table in words for people (every hand shown: a spectator's view)."""
        from referee.engine.core.tiles import tile_text, tiles_of

        state, game = self.state, self.game
        if state is None or game is None:
            return "(no deal yet: call reset)"
        side = self.codec.side
        lines = [f"{self.variant.id}, {self.players} players, deal {game.played + (state.end is None)} of this game; "
                 f"totals {list(game.totals)}"]
        layout = side.layout_text(state, len(state.history))
        lines.append("table: " + (layout or "(empty)"))
        for seat in range(self.players):
            mark = ">" if self.to_move == seat else " "
            lines.append(f"{mark} seat {seat}: " + " ".join(tile_text(t) for t in tiles_of(state.hands[seat])))
        if state.end is not None:
            lines.append(f"deal over: {state.end.reason} by seat {state.end.seat}" + (
                f"; wrote {list(self.last.wrote)}" if self.last is not None else ""))
        return "\n".join(lines)


def _view_copy(view: State) -> State:
    """A seat's view with its own lists (the messages in them are shared: nothing changes one)."""
    other = copy.copy(view)
    other.options = dict(view.options)
    other.scores = list(view.scores)
    other.family = view.family.copy()
    other.hand = list(view.hand)
    other.ends = dict(view.ends)
    other.counts = list(view.counts)
    other.history = list(view.history)
    return other
