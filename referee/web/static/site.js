// Shared by every page of a referee report: the page's document, tiles drawn as SVG, and the
// reload poll of a league page.  No library and nothing fetched: pages work opened from disk.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";

  // Pip centres within one half of a tile (a unit square), for 0..6.
  const PIPS = [
    [],
    [[0.5, 0.5]],
    [[0.27, 0.27], [0.73, 0.73]],
    [[0.27, 0.27], [0.5, 0.5], [0.73, 0.73]],
    [[0.27, 0.27], [0.73, 0.27], [0.27, 0.73], [0.73, 0.73]],
    [[0.27, 0.27], [0.73, 0.27], [0.5, 0.5], [0.27, 0.73], [0.73, 0.73]],
    [[0.27, 0.25], [0.27, 0.5], [0.27, 0.75], [0.73, 0.25], [0.73, 0.5], [0.73, 0.75]],
  ];

  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  // A tile as an SVG group in tile units: w x h is 2 x 1 (lying) or 1 x 2 (standing); `a` is
  // the half drawn left (lying) or on top (standing), `b` the other.
  function tileGroup(parent, x, y, w, h, a, b) {
    const g = el("g", { class: "tile", transform: `translate(${x},${y})` }, parent);
    el("rect", { x: 0.03, y: 0.03, width: w - 0.06, height: h - 0.06, rx: 0.14, class: "face" }, g);
    const lying = w > h;
    if (lying) el("line", { x1: 1, y1: 0.14, x2: 1, y2: 0.86, class: "divider" }, g);
    else el("line", { x1: 0.14, y1: 1, x2: 0.86, y2: 1, class: "divider" }, g);
    [a, b].forEach((v, half) => {
      const ox = lying ? half : 0;
      const oy = lying ? 0 : half;
      for (const [px, py] of PIPS[v]) {
        // A standing tile turns each half a quarter, so a 6 shows rows of three across it.
        const cx = lying ? px : py;
        const cy = lying ? py : px;
        el("circle", { cx: ox + cx, cy: oy + cy, r: 0.095, class: "pip" }, g);
      }
    });
    return g;
  }

  // A tile "a-b" on its own, for hands and the bazaar; `faceDown` draws its back (kolbasa's rows).
  // A `null` name is a tile the viewer may not see (referee play's hidden hands): its back, and
  // no `data-tile`.
  function tileSvg(name, opts) {
    const [a, b] = name === null ? [0, 0] : name.split("-").map(Number);
    const standing = opts && opts.standing;
    const faceDown = (opts && opts.faceDown) || name === null;
    const w = standing ? 1 : 2;
    const h = standing ? 2 : 1;
    const svg = el("svg", { viewBox: `0 0 ${w} ${h}`, class: "tile-svg" + (standing ? " standing" : "") + (faceDown ? " face-down" : ""), role: "img" });
    if (name !== null) svg.setAttribute("data-tile", name);
    const title = el("title", {}, svg);
    title.textContent = faceDown ? "a tile face down" : `[${a}|${b}]`;
    if (faceDown) {
      const g = el("g", { class: "tile back" }, svg);
      el("rect", { x: 0.03, y: 0.03, width: w - 0.06, height: h - 0.06, rx: 0.14, class: "face" }, g);
    } else tileGroup(svg, 0, 0, w, h, a, b);
    return svg;
  }

  function doc() {
    const node = document.getElementById("doc");
    return node ? JSON.parse(node.textContent) : null;
  }

  // Reload when the report changes.  The site's version.js is loaded again every `ms` as a
  // script (not fetched), because a page opened from disk (file://) may load scripts beside it
  // but may not fetch() them; so the poll works both served and from disk.
  let current = null;
  function pollVersion(src, ms) {
    window.refereeVersion = function (v) {
      if (current === null) current = v;
      else if (v !== current) location.reload();
    };
    function tick() {
      const s = document.createElement("script");
      s.src = `${src}?t=${Date.now()}`;
      s.onload = s.onerror = () => s.remove();
      document.head.appendChild(s);
    }
    tick();
    setInterval(tick, ms);
  }

  window.Referee = { el, tileGroup, tileSvg, doc, pollVersion, SVG };

  const poll = document.body.dataset.poll;
  if (poll) pollVersion(poll, Number(document.body.dataset.pollMs || 2000));
})();
