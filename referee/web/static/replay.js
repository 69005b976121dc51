// The deal replay: the table drawn move by move from the page's deal document.
//
// The document's `steps` are the deal as dealt (step 0), then every event in order (a tile
// placed, tiles drawn, a pass, a fault, the deal's end).  Each step carries the hands, the
// bazaar count and the scores after it, so stepping is drawing a snapshot; only the table is
// built here, from the placements so far, by the layout renderer the document names.
//
// Layout renderers (`LAYOUTS`): a function from the placements so far, each
// `{tile: "a-b", end: null | "left" | "right" | "up" | "down" | ..., seat}`, and the table's
// state beyond them (`table`: the deal document's `table` merged with the step's; the trains'
// markers and open double, kolbasa's sausage as the engine lays it; absent for the line and the
// cross) and how wide to lay it (`size`: `WIDE` for a desktop, `NARROW` for a phone), to
// positioned tiles `{tile, x, y, w, h, a, b, arm}` in tile units (a tile is 2 x 1
// lying, 1 x 2 standing; `a` is the half drawn left or on top; `tile` is the tile as it lies in
// the layout's own order and `arm` the branch it lies on, which tests read).  Tiles are returned
// in the layout's reading order.  A renderer may add marks drawn with them: `{kind: "label" |
// "note", text, x, y, anchor}` and `{kind: "marker", arm, x, y, w, h}`.  A new layout is one more
// entry here plus its name in the game's side (`layout` in referee/sides/); nothing else in the replay changes.
//
// `board` (below the renderers) draws a whole deal at one of its steps: the table, the hands,
// the scores, the undealt tiles and the result.  This page's replay steps through a deal with
// it, and `referee play`'s live table (play.js) draws each state of a deal in play with it;
// both reach the renderers and the board as `window.Referee.table`.
"use strict";

(function () {
  const R = window.Referee;

  function parse(name) {
    return name.split("-").map(Number);
  }

  // How wide a renderer lays the table, in tile units: `line`, from the lead to where an arm
  // of the line turns; `cross`, the same for a cross's arms from the spinner, and `column`, how
  // long its up and down columns grow before they turn; `train`, how long a train's row is
  // before it wraps; `band`, how many tiles of each of kolbasa's lines a band holds; `least`,
  // the narrowest and lowest frame.  A phone (the page's narrow layout, style.css) lays the
  // table about half as wide as a wider screen, so its tiles are drawn about as big as the hands'.
  const WIDE = { line: 11, cross: 17, column: 9, train: 24, band: Infinity, least: [24, 8] };
  const NARROW = { line: 5, cross: 7, column: 6, train: 12, band: 5, least: [12, 6] };

  // -- the line: a snake that grows from the lead both ways ---------------------------------
  // The line in reading order, each tile oriented as it lies (left value first), and where the
  // lead is in it.
  function chainOf(placements) {
    const chain = [];
    let leadIndex = 0;
    for (const p of placements) {
      const [lo, hi] = parse(p.tile);
      if (p.end === null) {
        chain.push({ left: lo, right: hi, tile: p.tile, closed: p.closed });
        leadIndex = 0;
      } else if (p.end === "left") {
        const v = chain[0].left;
        chain.unshift(hi === v ? { left: lo, right: hi, tile: p.tile, closed: p.closed } : { left: hi, right: lo, tile: p.tile, closed: p.closed });
        leadIndex += 1;
      } else if (p.end === "right") {
        const v = chain[chain.length - 1].right;
        chain.push(lo === v ? { left: lo, right: hi, tile: p.tile, closed: p.closed } : { left: hi, right: lo, tile: p.tile, closed: p.closed });
      } else {
        throw new Error(`the line layout has no ${p.end} end`);
      }
    }
    return { chain, leadIndex };
  }

  function lineLayout(placements, table, size = WIDE) {
    const halfWidth = size.line;
    const { chain, leadIndex } = chainOf(placements);
    if (!chain.length) return [];
    const out = new Array(chain.length);
    const lead = chain[leadIndex];
    const double = lead.left === lead.right;
    const w = double ? 1 : 2;
    out[leadIndex] = place(lead, -w / 2, double ? -1 : -0.5, w, double ? 2 : 1, lead.left, lead.right);
    // The right arm reads outwards left to right; the left arm outwards right to left.
    arm(chain.slice(leadIndex + 1).map((t) => ({ t, near: t.left, far: t.right })), w / 2, +1, +1, halfWidth, (i, pos) => (out[leadIndex + 1 + i] = pos));
    arm(chain.slice(0, leadIndex).reverse().map((t) => ({ t, near: t.right, far: t.left })), -w / 2, -1, -1, halfWidth, (i, pos) => (out[leadIndex - 1 - i] = pos));
    lineEnds(out, chain);
    return out;
  }

  // Which half of which tile is each open end of the line (`opens`: `[{end, half}]`, half 0 the
  // tile's `a`, 1 its `b`): once the line snakes, "left" and "right" no longer read left and
  // right on the table, and both may show the same number; `board.markEnds` draws them.
  function lineEnds(out, chain) {
    const first = out[0];
    const lastTile = out[chain.length - 1];
    const opens = (p) => (p.opens = p.opens || []);
    opens(first).push({ end: "left", half: first.a === chain[0].left ? 0 : 1 });
    const right = chain[chain.length - 1].right;
    opens(lastTile).push({ end: "right", half: lastTile.b === right ? 1 : 0 });
  }

  function place(t, x, y, w, h, a, b) {
    return { tile: `${t.left}-${t.right}`, x, y, w, h, a, b, closed: Boolean(t.closed) };
  }

  // Lay tiles outwards from cursor x on row 0, moving `dir` (+1 right); at the edge a standing
  // corner tile turns the arm onto the next row (`rowDir` +1 down, -1 up), and it comes back.
  function arm(tiles, x, dir, rowDir, halfWidth, put) {
    let y = 0;
    let afterCorner = false;
    tiles.forEach(({ t, near, far }, i) => {
      const double = near === far;
      const crosswise = double && !afterCorner;
      const w = crosswise ? 1 : 2;
      const next = x + dir * w;
      if (Math.abs(next) > halfWidth && !afterCorner) {
        // The corner: standing, its near half level with the row.
        const cx = dir > 0 ? x : x - 1;
        const cy = rowDir > 0 ? y - 0.5 : y - 1.5;
        put(i, place(t, cx, cy, 1, 2, rowDir > 0 ? near : far, rowDir > 0 ? far : near));
        x += dir;
        dir = -dir;
        y += rowDir * 2;
        afterCorner = true;
        return;
      }
      const left = dir > 0 ? x : next;
      if (crosswise) put(i, place(t, left, y - 1, 1, 2, near, far));
      else put(i, place(t, left, y - 0.5, 2, 1, dir > 0 ? near : far, dir > 0 ? far : near));
      x = next;
      afterCorner = false;
    });
  }

  // Lay tiles in rows between x = lo and x = hi, from cursor x on the row centred on y, moving
  // `dir` (+1 right): where the next tile would leave no room for a corner before the bound, a
  // standing corner tile turns onto the next row (`rowDir` +1 down, -1 up), which runs back.
  // Every tile stays within [lo, hi] (on a row too short for a tile, corners stack), so rows
  // kept between bounds never meet what lies beyond them.  `put(i, {x, y, w, h, a, b})`, `a`
  // drawn left or on top.
  function snake(tiles, x, y, dir, rowDir, lo, hi, put) {
    let afterCorner = false;
    tiles.forEach(({ near, far }, i) => {
      const crosswise = near === far && !afterCorner;
      const w = crosswise ? 1 : 2;
      const next = x + dir * w;
      if ((dir > 0 ? hi - next : next - lo) < 1) {
        put(i, { x: dir > 0 ? x : x - 1, y: rowDir > 0 ? y - 0.5 : y - 1.5, w: 1, h: 2, a: rowDir > 0 ? near : far, b: rowDir > 0 ? far : near });
        x += dir;
        dir = -dir;
        y += rowDir * 2;
        afterCorner = true;
        return;
      }
      const left = dir > 0 ? x : next;
      if (crosswise) put(i, { x: left, y: y - 1, w: 1, h: 2, a: near, b: far });
      else put(i, { x: left, y: y - 0.5, w: 2, h: 1, a: dir > 0 ? near : far, b: dir > 0 ? far : near });
      x = next;
      afterCorner = false;
    });
  }

  // -- the cross: the line, plus up and down through the first open double -------------------
  // (osel, telephone, muggins; RULES.md §6).  The line runs left and right from the spinner
  // (from the lead until there is one); `up` and `down` are columns through the spinner, each
  // tile reading outwards (`tile` is "near-far"), doubles lying across them.  Each of the four
  // arms, once it turns, keeps to its own quarter of the table, a pinwheel: the right arm turns
  // up, the up column left, the left arm down and the down column right, each row coming back
  // no nearer the spinner than the columns' edge; so no arm ever meets another.  The whole is
  // shifted so the lead stays where the line alone would put it: nothing jumps when the
  // spinner arrives.
  function crossLayout(placements, table, size = WIDE) {
    const line = placements.filter((p) => p.end === null || p.end === "left" || p.end === "right");
    const { chain, leadIndex } = chainOf(line);
    if (!chain.length) return [];
    let spinner = null;
    for (const p of line) {
      const [a, b] = parse(p.tile);
      if (a === b && !p.closed) {
        spinner = p.tile;
        break;
      }
    }
    const columns = placements.filter((p) => p.end === "up" || p.end === "down");
    const pivot = spinner === null ? leadIndex : chain.findIndex((t) => t.tile === spinner);
    if (columns.length && spinner === null) throw new Error("a tile on up or down, but no open double to grow from");
    const reach = Math.max(4, size.cross); // room on the spinner's row for a tile before its corner
    const out = new Array(chain.length);
    const p = chain[pivot];
    const double = p.left === p.right;
    const half = double ? 0.5 : 1;
    out[pivot] = place(p, -half, double ? -1 : -0.5, 2 * half, double ? 2 : 1, p.left, p.right);
    // The right arm reads outwards left to right and turns up; the left arm outwards right to
    // left and turns down; both come back no nearer than the columns' edge (x = ±1).
    const right = chain.slice(pivot + 1);
    snake(right.map((t) => ({ near: t.left, far: t.right })), half, 0, +1, -1, 1, reach,
      (i, q) => (out[pivot + 1 + i] = place(right[i], q.x, q.y, q.w, q.h, q.a, q.b)));
    const left = chain.slice(0, pivot).reverse();
    snake(left.map((t) => ({ near: t.right, far: t.left })), -half, 0, -1, +1, -reach, -1,
      (i, q) => (out[pivot - 1 - i] = place(left[i], q.x, q.y, q.w, q.h, q.a, q.b)));

    if (spinner !== null) {
      const value = parse(spinner)[0];
      for (const dir of ["up", "down"]) {
        // A column grows `size.column` units, then a lying corner tile over its end turns it
        // (up to the left, down to the right) into rows in its own quarter.
        const sign = dir === "up" ? -1 : 1;
        const tiles = [];
        let near = value;
        for (const q of columns.filter((c) => c.end === dir)) {
          const [a, b] = parse(q.tile);
          const far = a === near ? b : a;
          tiles.push({ tile: `${near}-${far}`, near, far, closed: Boolean(q.closed) });
          near = far;
        }
        const put = (t, q) => out.push({ tile: t.tile, arm: dir, closed: t.closed, ...q });
        let edge = sign; // the spinner stands from y = -1 to 1
        let i = 0;
        for (; i < tiles.length; i++) {
          const t = tiles[i];
          const across = t.near === t.far;
          const h = across ? 1 : 2;
          if (Math.abs(edge) - 1 + h > size.column) break;
          put(t, { x: across ? -1 : -0.5, y: sign < 0 ? edge - h : edge, w: across ? 2 : 1, h, a: sign < 0 ? t.far : t.near, b: sign < 0 ? t.near : t.far });
          edge += sign * h;
        }
        if (i === tiles.length) continue;
        const t = tiles[i];
        const y = sign < 0 ? edge - 1 : edge;
        put(t, { x: sign < 0 ? -1.5 : -0.5, y, w: 2, h: 1, a: sign < 0 ? t.far : t.near, b: sign < 0 ? t.near : t.far });
        const rest = tiles.slice(i + 1);
        snake(rest, sign < 0 ? -1.5 : 1.5, y + 0.5, sign, sign, sign < 0 ? -reach : 1, sign < 0 ? -1 : reach, (k, q) => put(rest[k], q));
      }
    }
    lineEnds(out, chain);
    if (spinner !== null) {
      // The columns' open ends: the last tile laid on each, or the spinner's own halves.
      const sp = out[pivot];
      for (const [dir, half] of [["up", 0], ["down", 1]]) {
        const column = out.filter((q) => q.arm === dir);
        const end = column.length ? column[column.length - 1] : sp;
        const far = column.length ? Number(end.tile.split("-")[1]) : null;
        (end.opens = end.opens || []).push({ end: dir, half: column.length ? (end.a === far ? 0 : 1) : half });
      }
    }
    // Keep the lead where the line alone puts it (see lineLayout).
    const lead = chain[leadIndex];
    const leadDouble = lead.left === lead.right;
    const dx = -(leadDouble ? 0.5 : 1) - out[leadIndex].x;
    const dy = (leadDouble ? -1 : -0.5) - out[leadIndex].y;
    for (const q of out) {
      q.x += dx;
      q.y += dy;
    }
    return out;
  }

  // -- mexican_train: the station, then one row per train ----------------------------------
  // (RULES.md §3, MT-3): every seat's train and the Mexican train, each labelled, read left to
  // right outward from the station (`tile` is "near-far"); a double lies across its train.  A
  // marker stands before a train that carries one (MT-6); an uncovered double is flagged `open`
  // ("open" or "hanging", MT-7, MT-8).  A long train wraps onto a second row of its own.
  const TRAIN_X = 3; // where every train's first tile starts (the marker stands before it)

  function trainsLayout(placements, table, size = WIDE) {
    const TRAIN_WIDTH = size.train;
    const station = placements.find((p) => p.end === null); // none yet at the deal's first step
    const trains = table.trains.map((t) => ({ ...t, tiles: [] }));
    const byName = Object.fromEntries(trains.map((t) => [t.name, t]));
    const value = station ? parse(station.tile)[0] : null;
    for (const p of placements) {
      if (p.end === null) continue;
      const train = byName[p.end];
      if (!train) throw new Error(`no train called ${p.end}`);
      const near = train.tiles.length ? train.tiles[train.tiles.length - 1].far : value;
      const [a, b] = parse(p.tile);
      train.tiles.push({ near, far: a === near ? b : a });
    }
    const out = [];
    let y = 0;
    for (const train of trains) {
      out.push({ kind: "label", text: train.label, x: TRAIN_X, y: y + 0.45, anchor: "start", arm: train.name });
      let top = y + 0.7; // the first row of tiles: 2 high, so a double can stand across it
      if ((table.markers || []).includes(train.name)) out.push({ kind: "marker", arm: train.name, x: TRAIN_X - 1.1, y: top + 0.6, w: 0.8, h: 0.8 });
      let x = TRAIN_X;
      train.tiles.forEach(({ near, far }, i) => {
        const double = near === far;
        const w = double ? 1 : 2;
        if (x + w > TRAIN_X + TRAIN_WIDTH) {
          x = TRAIN_X;
          top += 2.2;
        }
        const tile = { tile: `${near}-${far}`, arm: train.name, x, y: double ? top : top + 0.5, w, h: double ? 2 : 1, a: near, b: far };
        if (double && i === train.tiles.length - 1 && table.open === train.name) {
          tile.open = table.hangs ? "hanging" : "open";
          out.push(tile, { kind: "note", text: `${tile.open} double`, x: x + 1.3, y: top + 1.15, anchor: "start", arm: train.name });
          x += w;
          return;
        }
        out.push(tile);
        x += w;
      });
      y = top + 2.6;
    }
    // The station stands at the left, level with the middle of the trains.
    if (station) out.unshift({ tile: station.tile, x: 0, y: (y - 0.4) / 2 - 1, w: 1, h: 2, a: value, b: value });
    return out;
  }

  // -- kolbasa: the start across two lines ---------------------------------------------------
  // (RULES.md §3, KB-1…KB-6): the start stands with its top half on the top line and its bottom
  // half on the bottom line; both lines grow to the right, tile for tile, so junction i of one
  // line stands over junction i of the other and an aligned pair of junctions reads at a glance
  // (numbered under the bottom line).  While a knife is being laid (`table.knife`), both lines
  // open at its junction, the knife stands in the gap and what it cuts (the start and the tiles
  // before it) is flagged `cut`; the next step shows the sausage after the cut.  A narrow table
  // (`size.band` tiles a line) breaks a long sausage into bands, one under the other, each
  // holding both lines' next tiles, so the junctions stay aligned.
  const BAND_HEIGHT = 3.6; // tile units from one band to the next: two lines and their numbers

  function sausageLayout(placements, table, size = WIDE) {
    if (!table || !table.start) return [];
    const band = size.band;
    const first = (b) => (b === 0 ? 0 : b * band); // the first tile of band b (band may be Infinity)
    const knife = table.knife ? table.knife.at : null;
    const cut = (k) => knife !== null && k < knife;
    // Junction j (between tile j - 1 and tile j of a line) ends the band of tile j - 1.
    const junction = (j) => {
      const b = j > 0 ? Math.floor((j - 1) / band) : 0;
      return { b, x: 1 + 2 * (j - first(b)), y: b * BAND_HEIGHT };
    };
    const knifeBand = knife === null ? null : junction(knife).b;
    const opened = (b, k) => (b === knifeBand && k >= knife ? 1 : 0); // the gap the knife stands in
    const out = [{ tile: table.start.join("-"), x: 0, y: -1, w: 1, h: 2, a: table.start[0], b: table.start[1], cut: knife !== null }];
    const bands = Math.max(1, Math.ceil(Math.max(table.top.length, table.bottom.length) / band));
    [["top", -1], ["bottom", 0]].forEach(([arm, y]) => {
      for (let b = 0; b < bands; b++) out.push({ kind: "label", text: arm, x: -0.3, y: b * BAND_HEIGHT + y + 0.68, anchor: "end", arm });
      table[arm].forEach(([near, far], k) => {
        const b = Math.floor(k / band);
        out.push({ tile: `${near}-${far}`, arm, x: 1 + 2 * (k - first(b)) + opened(b, k), y: b * BAND_HEIGHT + y, w: 2, h: 1, a: near, b: far, cut: cut(k) });
      });
    });
    const aligned = Math.min(table.top.length, table.bottom.length);
    for (let i = 1; i <= aligned; i++) {
      const j = junction(i);
      const x = j.x + (i === knife ? 0.5 : opened(j.b, i));
      out.push({ kind: "note", text: String(i), x, y: j.y + 1.75, anchor: "middle" });
    }
    if (knife !== null) {
      const [a, b] = table.knife.tile;
      const j = junction(knife);
      out.push({ tile: `${a}-${b}`, arm: "knife", x: j.x, y: j.y - 1, w: 1, h: 2, a, b, knife: true });
    }
    return out;
  }

  const LAYOUTS = { line: lineLayout, cross: crossLayout, trains: trainsLayout, sausage: sausageLayout };

  // -- a deal's board: the table, the hands, the scores, the undealt tiles and the result -----
  // `board(doc, nodes)` draws the deal document `doc` at any of its steps into the page's
  // `nodes` (`seats`, `scores`, `undealt`, `moves`, `result`: elements); `opts.onStep(i)` is
  // called when a move of the list is clicked, and `opts.bottom` is the seat drawn at the
  // bottom of the table (0 unless given; the others follow it round the table).  The replay below steps through a finished deal
  // with it; the live table of `referee play` (play.js) draws each state of a deal in play with a
  // board of its own.  A hand's tile may be `null`: a tile its viewer may not see, drawn face
  // down (the undealt tiles too); a deal document of a log never has one.
  function board(doc, nodes, opts) {
    opts = opts || {};
    const steps = doc.steps;
    const last = steps.length - 1;
    const layout = LAYOUTS[doc.layout];
    const positions = ["bottom", "left", "top", "right"];
    const turned = (s) => (s - (opts.bottom || 0) + doc.players) % doc.players;
    const seatPos = (s) => (doc.players === 4 ? positions[turned(s)] : doc.players === 2 ? ["bottom", "top"][turned(s)] : ["bottom", "left", "right"][turned(s)]);

    // The page's narrow layout (style.css): hands stacked under the table, their tiles lying.
    const phone = window.matchMedia("(max-width: 700px)");
    let size = phone.matches ? NARROW : WIDE;

    const seatsBox = nodes.seats;
    const tableBox = document.createElement("div");
    tableBox.id = "table";
    tableBox.className = "felt";
    const tableSvg = R.el("svg", { id: "table-svg", role: "img", "aria-label": "the table" });
    tableBox.appendChild(tableSvg);
    seatsBox.replaceChildren(tableBox);

    const hands = doc.seats.map((seat) => {
      const box = document.createElement("section");
      box.className = `hand pos-${seatPos(seat.seat)} side-${seat.side % 2}`;
      box.id = `hand-${seat.seat}`;
      box.dataset.seat = seat.seat;
      const head = document.createElement("header");
      const name = document.createElement("span");
      name.className = "bot";
      name.textContent = seat.bot;
      const meta = document.createElement("span");
      meta.className = "meta";
      head.append(name, meta);
      const tiles = document.createElement("div");
      tiles.className = "tiles";
      box.append(head, tiles);
      seatsBox.appendChild(box);
      const pos = seatPos(seat.seat);
      return { box, meta, tiles, seat, side: pos === "left" || pos === "right" };
    });

    // The table after step n, as the document's layout renderer lays it (mexican_train's station
    // double, nobody's tile, is a step of its own and the placement with no end).
    function tableAt(n) {
      const placed = steps.slice(0, n + 1).filter((s) => s.kind === "place" || s.kind === "station");
      const table = doc.table || steps[n].table ? { ...doc.table, ...steps[n].table } : undefined;
      return layout(placed, table, size);
    }

    // A stable frame: the bounding box of every step's table, so nothing jumps while stepping (a
    // knife's cut shrinks kolbasa's table, so the last step is not always the widest).
    // At least `size.least` units wide and high around what is drawn, so a short deal is not
    // drawn huge.
    function frame() {
      let box = null;
      if (layout) {
        for (let n = 0; n <= last; n++) {
          for (const p of tableAt(n)) {
            const w = p.w === undefined ? p.text.length * 0.32 : p.w; // text: about a third of a tile unit a letter
            const x = p.anchor === "end" ? p.x - w : p.anchor === "middle" ? p.x - w / 2 : p.x;
            const y = p.h === undefined ? p.y - 0.6 : p.y;
            const h = p.h === undefined ? 0.8 : p.h;
            box = box ? { x0: Math.min(box.x0, x), y0: Math.min(box.y0, y), x1: Math.max(box.x1, x + w), y1: Math.max(box.y1, y + h) }
              : { x0: x, y0: y, x1: x + w, y1: y + h };
          }
        }
      }
      box = box || { x0: 0, y0: 0, x1: 0, y1: 0 };
      [["x0", "x1"], ["y0", "y1"]].forEach(([lo, hi], i) => {
        const grow = Math.max(0, size.least[i] - (box[hi] - box[lo])) / 2;
        box[lo] -= grow;
        box[hi] += grow;
      });
      const pad = 0.8;
      tableSvg.setAttribute("viewBox", `${box.x0 - pad} ${box.y0 - pad} ${box.x1 - box.x0 + 2 * pad} ${box.y1 - box.y0 + 2 * pad}`);
    }
    frame();

    const moves = nodes.moves;
    moves.replaceChildren();
    steps.forEach((s, i) => {
      if (i === 0) return;
      const li = document.createElement("li");
      li.dataset.step = i;
      li.className = `move kind-${s.kind}`;
      const seatTag = document.createElement("span");
      seatTag.className = "seat-tag";
      seatTag.textContent = s.seat === null || s.seat === undefined ? "" : `seat ${s.seat}`;
      const text = document.createElement("span");
      text.textContent = s.text + (s.kind === "draw" && s.tiles.length ? `: ${s.tiles.join(" ")}` : "");
      li.append(seatTag, text);
      if (s.wrote) {
        const w = document.createElement("span");
        w.className = "wrote";
        w.textContent = s.wrote.map((x, side) => (x ? `${doc.sides[side]} +${x}` : "")).filter(Boolean).join(", ");
        text.append(w);
      }
      if (typeof s.ms === "number") li.title = `the bot answered in ${s.ms.toFixed(2)} ms`;
      if (s.fault && s.fault.detail) {
        const d = document.createElement("span");
        d.className = "detail";
        d.textContent = s.fault.detail;
        text.append(d);
      }
      if (opts.onStep) li.addEventListener("click", () => opts.onStep(i));
      moves.appendChild(li);
    });

    const scores = nodes.scores;
    const undealt = nodes.undealt;
    const result = nodes.result;

    function pipsOf(tiles) {
      return tiles.reduce((sum, t) => sum + parse(t).reduce((a, b) => a + b, 0), 0);
    }

    function drawTable(n) {
      while (tableSvg.firstChild) tableSvg.removeChild(tableSvg.firstChild);
      if (!layout) {
        const t = R.el("text", { x: 0, y: 0, "text-anchor": "middle", class: "no-layout" }, tableSvg);
        t.textContent = `no renderer for the ${doc.layout} layout`;
        return;
      }
      const lastTile = steps[n].kind === "place" ? steps[n].tile : null;
      laid = tableAt(n);
      for (const p of laid) {
        if (p.kind === "label" || p.kind === "note") {
          const t = R.el("text", { x: p.x, y: p.y, "text-anchor": p.anchor || "start", class: `table-${p.kind}` }, tableSvg);
          if (p.arm) t.setAttribute("data-arm", p.arm);
          t.textContent = p.text;
          continue;
        }
        if (p.kind === "marker") {
          const m = R.el("g", { class: "marker", "data-marker": p.arm, transform: `translate(${p.x},${p.y})` }, tableSvg);
          R.el("title", {}, m).textContent = "a marker: this train is open to everyone";
          R.el("rect", { x: 0, y: 0, width: p.w, height: p.h, rx: 0.18 }, m);
          R.el("text", { x: p.w / 2, y: p.h * 0.72, "text-anchor": "middle" }, m).textContent = "M";
          continue;
        }
        const g = R.tileGroup(tableSvg, p.x, p.y, p.w, p.h, p.a, p.b);
        g.setAttribute("data-tile", p.tile);
        if (p.arm) g.setAttribute("data-arm", p.arm);
        if (p.open) g.setAttribute("data-open", p.open);
        if (p.cut) g.classList.add("cut");
        if (p.knife) g.classList.add("knife");
        if (p.closed) g.classList.add("closed");
        const plain = p.tile.split("-").map(Number).sort((a, b) => a - b).join("-");
        if (plain === lastTile) g.classList.add("last");
      }
    }

    // The open ends named in `ends` (["left", "right"], or up and down too), marked on the table
    // as last drawn: a ring round the half that shows the end's number and the end's name beside
    // it, so a tile that fits both ends can be placed knowingly however the line has snaked.
    // Each mark carries `data-end-mark` (the end) and `data-value` (the number its half shows).
    let laid = [];
    function markEnds(ends) {
      for (const old of tableSvg.querySelectorAll(".end-mark")) old.remove();
      for (const p of laid) {
        for (const o of p.opens || []) {
          if (!ends.includes(o.end)) continue;
          const lying = p.w > p.h;
          const g = R.el("g", { class: "end-mark", "data-end-mark": o.end, "data-value": o.half ? p.b : p.a }, tableSvg);
          const across = p.a === p.b && (lying ? o.end === "up" || o.end === "down" : o.end === "left" || o.end === "right");
          if (across) {
            // A double across its line shows the end's number on both halves: the ring goes round
            // it, the name on the end's own side.
            R.el("rect", { x: p.x - 0.04, y: p.y - 0.04, width: p.w + 0.08, height: p.h + 0.08, rx: 0.16 }, g);
            const at = { left: [p.x - 0.12, p.y + p.h / 2 + 0.17, "end"], right: [p.x + p.w + 0.12, p.y + p.h / 2 + 0.17, "start"],
              up: [p.x + p.w / 2, p.y - 0.18, "middle"], down: [p.x + p.w / 2, p.y + p.h + 0.5, "middle"] }[o.end];
            R.el("text", { x: at[0], y: at[1], "text-anchor": at[2] }, g).textContent = o.end;
            continue;
          }
          const x = p.x + (lying ? o.half : 0);
          const y = p.y + (lying ? 0 : o.half);
          R.el("rect", { x: x - 0.04, y: y - 0.04, width: 1.08, height: 1.08, rx: 0.16 }, g);
          const below = !lying && o.half === 1;
          R.el("text", { x: x + 0.5, y: below ? y + 1.5 : y - 0.18, "text-anchor": "middle" }, g).textContent = o.end;
        }
      }
    }

    // kolbasa's rows lie face down, left to right, even to their owner (KB-8), but a tile once
    // turned up is public wherever it goes (KB-15): a tailed tile, a cut sausage's tiles back in
    // a row show face up (`public`); only the tiles as dealt stay face down.  The tile turned up
    // shows at the row's right end; tiles that just arrived (tailed, cut back) are marked.
    const seenBy = [];
    {
      const known = new Set();
      steps.forEach((s, n) => {
        for (const t of [s.up, s.tile, ...(s.kind === "cut" || s.kind === "tail" ? s.tiles || [] : [])]) if (t) known.add(t);
        seenBy[n] = new Set(known);
      });
    }
    function rowTile(s, seat, t, i, row, n) {
      const up = t !== null && s.up === t && i === row.length - 1;
      const shown = t !== null && seenBy[n].has(t);
      const svg = R.tileSvg(t, { faceDown: !up && !shown });
      if (up) svg.classList.add("up");
      else if (shown) {
        svg.classList.add("public");
        svg.querySelector("title").textContent += ": face down in the row, but public (turned up before)";
      }
      const arrived = (s.kind === "tail" && s.seat === seat && i === 0) || (s.kind === "cut" && s.to === seat && i < s.tiles.length);
      if (arrived) svg.classList.add("drawn");
      return svg;
    }

    function drawHands(s, n) {
      for (const h of hands) {
        const seat = h.seat.seat;
        const tiles = s.hands[seat];
        const hidden = tiles.some((t) => t === null);
        h.tiles.classList.toggle("row", Boolean(doc.rows));
        h.tiles.replaceChildren(...tiles.map((t, i) => {
          if (doc.rows) return rowTile(s, seat, t, i, tiles, n);
          const svg = R.tileSvg(t, { standing: h.side && !phone.matches });
          if (s.kind === "draw" && s.seat === seat && s.tiles.includes(t)) svg.classList.add("drawn");
          return svg;
        }));
        const side = doc.sides[h.seat.side];
        const where = side === `seat ${seat}` ? side : `seat ${seat} · ${side}`;
        const count = `${tiles.length} tile${tiles.length === 1 ? "" : "s"}`;
        h.meta.textContent = doc.rows ? `${where} · a row of ${count} face down${s.up && tiles[tiles.length - 1] === s.up ? `, ${s.up} turned up` : ""}`
          : `${where} · ${count}` + (hidden ? ", face down" : `, ${pipsOf(tiles)} pips`);
        h.box.classList.toggle("acting", s.seat === seat);
      }
    }

    function drawScores(s) {
      scores.replaceChildren();
      const title = document.createElement("h3");
      title.textContent = "Scores";
      scores.appendChild(title);
      doc.sides.forEach((name, side) => {
        const row = document.createElement("div");
        row.className = "score";
        row.dataset.side = side;
        const label = document.createElement("span");
        // the side's bots by name, then the side ("greedy_bot · pair A"; a seat of its own: "greedy_bot · seat 2")
        const bots = [...new Set((doc.seats || []).filter((x) => x.side === side).map((x) => x.bot))];
        label.textContent = bots.length ? `${bots.join(" & ")} · ${name}` : name;
        const value = document.createElement("strong");
        value.className = "value";
        value.textContent = s.scores[side];
        row.append(label, value);
        const gained = s.scores[side] - doc.before[side];
        if (gained) {
          const g = document.createElement("span");
          g.className = "gain";
          g.textContent = `+${gained}`;
          row.append(g);
        }
        scores.appendChild(row);
      });
    }

    function drawUndealt(s) {
      undealt.replaceChildren();
      if (!doc.undealt.length) return;
      const title = document.createElement("h3");
      const left = doc.undealt_kind === "bazaar" ? doc.undealt.slice(doc.undealt.length - s.bazaar) : doc.undealt;
      title.textContent = doc.undealt_kind === "bazaar" ? `Bazaar: ${left.length} left` : `Sleeping: ${left.length}`;
      const tiles = document.createElement("div");
      tiles.className = "tiles small";
      tiles.replaceChildren(...left.map((t) => R.tileSvg(t)));
      undealt.append(title, tiles);
    }

    function drawResult(n) {
      const r = doc.result;
      result.hidden = !(r && n === last);
      if (result.hidden) return;
      result.replaceChildren();
      const h = document.createElement("h2");
      h.textContent = steps[last].text;
      const table = document.createElement("p");
      table.className = "figures";
      table.textContent = `hand values ${r.values.join(" / ")} · wrote ${r.wrote.join(" / ")} (${doc.sides.join(" / ")}) · totals ${r.totals.join(" / ")}`;
      const notes = document.createElement("ul");
      notes.className = "notes";
      for (const note of r.notes || []) {
        const li = document.createElement("li");
        li.textContent = note;
        notes.appendChild(li);
      }
      result.append(h, table, notes);
    }

    // Step n of the deal, drawn whole.
    function draw(n) {
      const s = steps[n];
      drawTable(n);
      drawHands(s, n);
      drawScores(s);
      drawUndealt(s);
      drawResult(n);
      for (const li of moves.children) li.classList.toggle("current", Number(li.dataset.step) === n);
    }

    // Turning a phone, or resizing a window across the narrow layout's edge: the table is laid
    // again at the new width (the caller draws its step again).
    function resize() {
      size = phone.matches ? NARROW : WIDE;
      frame();
    }

    return { draw, resize, markEnds, phone, steps, last, get size() { return size; } };
  }

  window.Referee.table = { LAYOUTS, WIDE, NARROW, board };

  // -- the replay page: a finished deal, stepped through ---------------------------------------
  const doc = R.doc();
  if (!doc || doc.kind !== "deal") return; // another page (referee play's) uses the renderers only
  const steps = doc.steps;
  const last = steps.length - 1;
  const moves = document.getElementById("moves");
  const view = board(doc, {
    seats: document.getElementById("seats"), scores: document.getElementById("scores"), undealt: document.getElementById("undealt"),
    moves, result: document.getElementById("result"),
  }, { onStep: (i) => go(i) });

  const counter = document.getElementById("counter");
  const caption = document.getElementById("caption");
  let at = 0;

  function go(n) {
    at = Math.max(0, Math.min(last, n));
    const s = steps[at];
    counter.textContent = `move ${at} / ${last}`;
    caption.textContent = at === 0 ? `${doc.seats[doc.leader].bot} (seat ${doc.leader}) leads` : s.text;
    if (s.kind === "fault" && s.fault) caption.textContent += ` — ${s.fault.detail}`;
    view.draw(at);
    // The current move scrolls into view within the list only: the page stays where it is (on
    // a phone the list is far below the table, and stepping must not carry the page to it).
    const cur = moves.querySelector(".current");
    if (cur) {
      const box = moves.getBoundingClientRect();
      const r = cur.getBoundingClientRect();
      if (r.top < box.top) moves.scrollTop -= box.top - r.top;
      else if (r.bottom > box.bottom) moves.scrollTop += r.bottom - box.bottom;
    }
    document.getElementById("back").disabled = document.getElementById("first").disabled = at === 0;
    document.getElementById("forward").disabled = document.getElementById("last").disabled = at === last;
    history.replaceState(null, "", `#move=${at}`);
  }

  function fromUrl() {
    const m = /(?:^|[#&?])move=(\d+)/.exec(location.hash) || /(?:^|[?&])move=(\d+)/.exec(location.search);
    return m ? Number(m[1]) : 0;
  }

  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("back").addEventListener("click", () => go(at - 1));
  document.getElementById("forward").addEventListener("click", () => go(at + 1));
  document.getElementById("last").addEventListener("click", () => go(last));

  // Play: a move a second until the end (from the start when already there), or until paused.
  const playButton = document.getElementById("play");
  let timer = null;
  function pause() {
    clearInterval(timer);
    timer = null;
    playButton.textContent = "play";
    playButton.setAttribute("aria-pressed", "false");
  }
  function play() {
    if (at === last) go(0);
    playButton.textContent = "pause";
    playButton.setAttribute("aria-pressed", "true");
    timer = setInterval(() => {
      go(at + 1);
      if (at === last) pause();
    }, Number(document.body.dataset.playMs || 1000));
  }
  playButton.addEventListener("click", () => (timer ? pause() : play()));
  for (const id of ["first", "back", "forward", "last"]) document.getElementById(id).addEventListener("click", pause);

  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === " ") {
      if (timer) pause();
      else play();
      e.preventDefault();
      return;
    }
    if (timer) pause();
    if (e.key === "ArrowRight") go(at + 1);
    else if (e.key === "ArrowLeft") go(at - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(last);
    else return;
    e.preventDefault();
  });
  // Turning a phone, or resizing a window across the narrow layout's edge, lays the table again.
  view.phone.addEventListener("change", () => {
    view.resize();
    go(at);
  });
  window.addEventListener("hashchange", () => {
    const n = fromUrl();
    if (n !== at) go(n);
  });
  window.replay = { go, get at() { return at; }, get step() { return steps[at]; }, last, LAYOUTS, WIDE, NARROW, get size() { return view.size; } };
  go(fromUrl());
})();
