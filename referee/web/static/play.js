// referee play's live table: a person plays against bots.
//
// The server (referee/play/server.py) sends the table's state over a websocket whenever it
// changes: the deal on show as a deal document of the web report, cut down to what the
// person's seats may see (hidden tiles are null, drawn face down), the turn the person is asked
// (`ask`: its `legal` entries, exactly as a bot receives them), whether the deal is over, and
// the match's end.  The deal is drawn by the replay's own board and renderers (replay.js,
// `Referee.table`); this script adds the turn: the playable tiles of the person's hand are
// highlighted, a tile that fits one place plays at once, one that fits several offers a button
// per place, and stop, declarations, write-off and decline are buttons.
//
// Hooks for tests and for people alike: every element that plays a move carries `data-move`
// (its legal entry as JSON, sent back as it is), the control that goes on to the next deal
// `data-next`, and the match's end `data-match-over`; each attribute is present only while
// the element can be used.
"use strict";

(function () {
  const R = window.Referee;
  const info = R.doc();
  const $ = (id) => document.getElementById(id);
  const nodes = { seats: $("seats"), scores: $("scores"), undealt: $("undealt"), moves: $("moves"), result: $("result") };
  const prompt = $("prompt");
  const choices = $("choices");
  const next = $("next");
  const over = $("over");

  let state = null; // the newest state from the server
  let socket = null;
  let selected = null; // a tile of the hand chosen, waiting for its place ("a-b")
  let sent = false; // a move is on its way: no second one for the same turn
  let clock = null; // the countdown of a clocked turn
  let board = null; // the deal on show, as replay.js draws it
  let verdictShown = false; // the match's end has been brought into view once

  const tileName = (t) => [...t].sort((a, b) => a - b).join("-");

  // -- the connection --------------------------------------------------------------------------

  function connect() {
    const url = new URL("ws", location.href);
    url.protocol = "ws:";
    socket = new WebSocket(url);
    socket.addEventListener("open", () => connection("at the table"));
    socket.addEventListener("message", (e) => {
      const msg = JSON.parse(e.data);
      if (msg.type === "state") show(msg);
      else if (msg.type === "refused") {
        sent = false;
        connection(`not played: ${msg.why}`);
      }
    });
    socket.addEventListener("close", () => {
      socket = null;
      if (state && state.over) {
        connection("the referee has finished");
        return;
      }
      connection("connection lost: trying again…");
      setTimeout(connect, 1000);
    });
  }

  function connection(text) {
    $("connection").textContent = text;
  }

  function say(message) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  // -- what the table shows --------------------------------------------------------------------

  function show(s) {
    state = s;
    sent = false;
    const deal = s.deal && yours(s.deal, s.mine);
    board = null;
    if (deal) {
      const mine = s.mine;
      board = R.table.board(deal, nodes, { bottom: mine.length ? mine[0] : 0 });
      board.draw(deal.steps.length - 1);
      for (const seat of mine) $(`hand-${seat}`).classList.add("yours");
      nodes.moves.scrollTop = nodes.moves.scrollHeight;
      const w = s.where;
      const seatings = info.seatings.length;
      $("where").textContent = `· game ${w.game + 1} of ${info.games}` + (seatings > 1 ? `, seating ${w.orientation + 1} of ${seatings}` : "")
        + `, deal ${w.deal + 1}`;
    }
    const ask = s.ask;
    if (!ask || (selected !== null && !ask.legal.some((e) => e.tile && tileName(e.tile) === selected))) selected = null;
    offer(ask);
    finished(s);
    ended(s.over);
  }

  // The deal as the person reads it: their seats are "you" (in the scores too), their train
  // "your train"; another bot's train is named by the document ("greedy_bot's train").
  function yours(deal, mine) {
    const you = `${info.you} (you)`;
    const seats = deal.seats.map((x) => (mine.includes(x.seat) ? { ...x, bot: you } : x));
    let table = deal.table;
    if (table && table.trains) {
      table = { ...table, trains: table.trains.map((t) => {
        const seat = /^seat(\d+)$/.exec(t.name);
        if (!seat || !mine.includes(Number(seat[1]))) return t;
        return { ...t, label: mine.length === 1 ? "your train" : `your train (seat ${seat[1]})` };
      }) };
    }
    return { ...deal, seats, table };
  }

  // The deal on show is over: its result (the board draws it) and the way on.
  function finished(s) {
    const gameEnd = $("game-end");
    gameEnd.hidden = !(s.finished && s.game_end);
    if (!gameEnd.hidden) {
      const g = s.game_end;
      gameEnd.textContent = `The game is over: ${g.reason} (totals ${g.totals.join(" / ")})`;
    }
    const more = s.next;
    next.hidden = !more;
    if (more) next.setAttribute("data-next", "");
    else next.removeAttribute("data-next");
    $("waiting").textContent = s.finished && s.waiting ? `${s.waiting} more finished deal${s.waiting === 1 ? "" : "s"} to see` : "";
    if (s.next) prompt.textContent = "The deal is over: its result is below. Go on to the next deal when you are ready.";
    else if (s.finished && !s.over) prompt.textContent = "The next deal is being dealt…";
  }

  function ended(o) {
    over.hidden = !o;
    if (!o) {
      over.removeAttribute("data-match-over");
      return;
    }
    over.setAttribute("data-match-over", o.interrupted ? "interrupted" : "done");
    const h = document.createElement("h2");
    h.textContent = o.interrupted ? "The match was interrupted" : "The match is over";
    over.replaceChildren(h, ...o.lines.map((line) => {
      const p = document.createElement("p");
      p.textContent = line;
      return p;
    }));
    if (!state.next) prompt.textContent = o.interrupted ? "The match was interrupted." : "The match is over.";
    // The verdict, once: the person may be screens below it, at the deal's result or its moves.
    if (!verdictShown) {
      verdictShown = true;
      over.scrollIntoView({ block: "start" });
    }
  }

  // -- the person's turn -----------------------------------------------------------------------

  // Each legal entry's label on a button: where the tile goes, and what else it says.
  function label(e, ask, withTile) {
    if (e.stop) return "stop: place nothing more this turn";
    if (e.tile === null && e.declare === "write_off") return "write the fish off";
    if (e.tile === null && e.declare === "decline") return "decline the fish";
    const parts = withTile ? [tileName(e.tile)] : [];
    if (e.train) parts.push(trainWords(e.train));
    else if (e.place) parts.push(placeWords(e.place));
    else if (e.end === null || e.end === undefined) parts.push("lead it");
    else parts.push(`on the ${e.end}` + (ask.ends[e.end] !== undefined ? ` (${ask.ends[e.end]})` : ""));
    if (e.closed) parts.push("closed");
    if (e.declare === "hundred") parts.push("for a hundred");
    return parts.join(", ");
  }

  // Where a train is, as the table labels it: "on your train", "on greedy_bot's train", "on the
  // Mexican train".
  function trainWords(name) {
    const train = state.deal && state.deal.table && (state.deal.table.trains || []).find((t) => t.name === name);
    if (name === "mexican") return "on the Mexican train";
    const seat = Number(name.replace("seat", ""));
    if (state.mine.includes(seat)) return state.mine.length === 1 ? "on your train" : `on your train (seat ${seat})`;
    return train ? `on ${train.label}` : `on seat ${seat}'s train`;
  }

  function placeWords(place) {
    const [where, at] = place.split(":");
    if (where === "knife") return `a knife across junction ${at}`;
    if (where === "start") return "the start";
    return at === undefined ? `on the ${where} line` : `into the ${where} line at junction ${at}`;
  }

  function button(text, entry) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "choice";
    b.textContent = text;
    if (entry) b.dataset.move = JSON.stringify(entry);
    return b;
  }

  function offer(ask) {
    clearInterval(clock);
    clock = null;
    choices.replaceChildren();
    document.body.classList.toggle("asked", Boolean(ask));
    if (!ask) {
      if (state.deal && !state.finished) prompt.textContent = "The bots are playing…";
      return;
    }
    const byTile = new Map();
    const free = [];
    for (const e of ask.legal) {
      if (e.tile === null) free.push(e);
      else {
        const k = tileName(e.tile);
        if (!byTile.has(k)) byTile.set(k, []);
        byTile.get(k).push(e);
      }
    }
    // One tile to place (kolbasa's tile turned up, a forced double): its places at once.
    if (selected === null && byTile.size === 1 && [...byTile.values()][0].length > 1) selected = [...byTile.keys()][0];
    const hand = $(`hand-${ask.seat}`);
    if (hand) hand.classList.add("to-move");
    const found = new Set();
    for (const svg of hand ? hand.querySelectorAll("svg[data-tile]") : []) {
      const entries = byTile.get(svg.dataset.tile);
      if (!entries) {
        svg.classList.add("unplayable");
        continue;
      }
      found.add(svg.dataset.tile);
      playable(svg, entries);
    }
    // A legal tile the hand does not show (never expected): a button of its own all the same.
    for (const [k, entries] of byTile) {
      if (found.has(k)) continue;
      const b = button(k);
      playable(b, entries);
      choices.appendChild(b);
    }
    if (selected !== null) {
      const entries = byTile.get(selected);
      const hint = document.createElement("span");
      hint.className = "choose-hint";
      hint.textContent = `${selected}:`;
      choices.append(hint, ...entries.map((e) => button(label(e, ask, false), e)));
    }
    for (const e of free) choices.appendChild(button(label(e, ask, true), e));
    choices.querySelectorAll("button").forEach((b, i) => {
      if (i < 9) b.title = `key ${i + 1}`;
    });
    // The ends a chosen tile may go to, marked on the table (a line that snakes no longer reads
    // left to right, and both ends may show the same number).
    if (board) board.markEnds(selected === null ? [] : byTile.get(selected).map((e) => e.end).filter((e) => typeof e === "string"));
    // One hand: "your move"; two (a table of four against one bot), which of them.
    const whose = state.mine.length > 1 ? ` with your hand at seat ${ask.seat}` : "";
    const what = selected !== null ? `where does ${selected} go?` : byTile.size ? "click a highlighted tile" : "choose below";
    prompt.textContent = `Your move${whose}: ${what}`;
    if (typeof ask.time_ms === "number") {
      const until = Date.now() + ask.time_ms;
      const base = prompt.textContent;
      const tick = () => (prompt.textContent = `${base} · ${Math.max(0, Math.ceil((until - Date.now()) / 1000))} s left`);
      tick();
      clock = setInterval(tick, 1000);
    }
  }

  // A tile of the hand (or a button) that plays `entries`: one place plays at once (data-move),
  // several ask where (data-choose).
  function playable(el, entries) {
    el.classList.add("playable");
    if (el.dataset.tile === selected) el.classList.add("selected");
    el.setAttribute("tabindex", "0");
    el.setAttribute("role", "button");
    const name = tileName(entries[0].tile);
    if (entries.length === 1) {
      el.dataset.move = JSON.stringify(entries[0]);
      el.setAttribute("aria-label", `play ${label(entries[0], state.ask, true)}`);
    } else {
      el.dataset.choose = name;
      el.setAttribute("aria-label", `play ${name}: it fits ${entries.length} places`);
    }
  }

  function play(entry) {
    if (sent || !state || !state.ask) return;
    sent = true;
    selected = null;
    prompt.textContent = "Played; the table moves on…";
    say({ type: "play", turn: state.ask.turn, move: entry });
  }

  function choose(tile) {
    selected = tile;
    offer(state.ask);
    const first = choices.querySelector("button[data-move]");
    if (first) first.focus();
  }

  document.addEventListener("click", (e) => {
    const mover = e.target.closest("[data-move]");
    if (mover) {
      play(JSON.parse(mover.dataset.move));
      return;
    }
    const chooser = e.target.closest("[data-choose]");
    if (chooser) choose(chooser.dataset.choose);
  });
  next.addEventListener("click", () => {
    if (next.hasAttribute("data-next")) say({ type: "next" });
  });

  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const focused = document.activeElement;
    if ((e.key === "Enter" || e.key === " ") && focused && focused.matches("svg.playable")) {
      focused.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      const tiles = [...document.querySelectorAll(".to-move svg.playable")];
      if (!tiles.length) return;
      const at = tiles.indexOf(focused);
      const step = e.key === "ArrowRight" ? 1 : -1;
      tiles[at < 0 ? 0 : (at + step + tiles.length) % tiles.length].focus();
    } else if (/^[1-9]$/.test(e.key)) {
      const b = choices.querySelectorAll("button")[Number(e.key) - 1];
      if (!b) return;
      b.click();
    } else if (e.key === "Escape" && selected !== null) {
      selected = null;
      offer(state.ask);
    } else if ((e.key === "n" || e.key === "N") && next.hasAttribute("data-next")) {
      next.click();
    } else return;
    e.preventDefault();
  });

  window.play = { get state() { return state; } };
  connect();
})();
