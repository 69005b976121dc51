#!/usr/bin/env node
// random_bot.js: plays a uniformly random legal play.  Node.js, standard library only.
//
// The protocol (PROTOCOL.md): one JSON object per line on stdin, one per line on stdout.
// We answer "hello" with our name and "turn" with a "play" picked from turn.legal; every
// other message (deal, placed, drew, passed, deal_end, ...) needs no answer.
//
// Seed: the environment variable BOT_SEED, or the first argument, else random.
//     node random_bot.js 42          BOT_SEED=42 node random_bot.js
"use strict";
const readline = require("readline");

// A small seeded generator (mulberry32), so a given seed repeats the same plays.
function makeRng(seedText) {
  let h = 1779033703;
  for (const ch of String(seedText)) h = Math.imul(h ^ ch.charCodeAt(0), 3432918353);
  let a = h >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const seed = process.env.BOT_SEED || process.argv[2] || String(Math.random());
const random = makeRng(seed);

// Write one message as one line.  No flush is needed: Node hands each write to the pipe
// at once (on Linux, synchronously).
function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    return; // not JSON: ignore it
  }
  if (msg === null || typeof msg !== "object") return;
  if (msg.type === "hello") {
    send({ type: "hello", name: "random_bot.js", version: "1.0", author: "referee sample bots", protocol: 1 });
  } else if (msg.type === "turn") {
    const choice = msg.legal[Math.floor(random() * msg.legal.length)];
    console.error(`playing ${JSON.stringify(choice)}`); // stderr: our log
    // the entry as it is (tile, end, and "closed", "stop", "declare", "train" or "place" where a
    // game has them), with the turn's id
    send({ type: "play", ...choice, turn: msg.id === undefined ? null : msg.id });
  } else if (msg.type === "match_end") {
    process.exit(0); // the match is over
  }
  // any other type (including ones added to the protocol later) is ignored
});
input.on("close", () => process.exit(0)); // stdin closed: exit
