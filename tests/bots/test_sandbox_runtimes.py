"""Bots in every language a host is likely to meet still start and play in the sandbox after
issue 42 took away its procfs, its terminals and the machine's counters (a /proc of a few constant
files; PROTOCOL.md, "Fair play"): Python, Node, C, Java, Go and C#, each against first_bot in a
seeded match; and Java behind a shell script, which gets the real /proc closed by Landlock (with
the constant one its launcher, finding its libraries through /proc/self/exe, found the shell's).
A language whose toolchain is not installed is skipped, saying which package brings it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.bots import sandbox as S
from tests.bots.test_sandbox_fairplay import JAVA_BOT, folder

ROOT = Path(__file__).resolve().parents[2]
HANG = 300

pytestmark = [pytest.mark.skipif(not os.access(S.BWRAP, os.X_OK), reason="bubblewrap is not installed (apt-get install bubblewrap)"),
              pytest.mark.slow]  # real bot processes, and compilers

GO_BOT = """\
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var msg map[string]interface{}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			continue
		}
		switch msg["type"] {
		case "hello":
			fmt.Println(`{"type":"hello","name":"go_first","protocol":1}`)
		case "turn":
			play := msg["legal"].([]interface{})[0].(map[string]interface{})
			play["type"] = "play"
			out, _ := json.Marshal(play)
			fmt.Println(string(out))
		case "match_end":
			return
		}
	}
}
"""

CSHARP_BOT = """\
using System;
using System.Text.Json;
using System.Text.Json.Nodes;

while (Console.ReadLine() is string line) {
    var msg = JsonNode.Parse(line)!.AsObject();
    switch ((string?)msg["type"]) {
        case "hello": Console.WriteLine("{\\"type\\":\\"hello\\",\\"name\\":\\"cs_first\\",\\"protocol\\":1}"); break;
        case "turn":
            var play = msg["legal"]![0]!.DeepClone().AsObject();
            play["type"] = "play";
            Console.WriteLine(play.ToJsonString());
            break;
        case "match_end": return;
    }
    Console.Out.Flush();
}
"""


def need(*tools: str, package: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"no {', '.join(missing)} here (apt-get install {package})")


def build(language: str, where: Path) -> str:
    """The command of a first-play bot in ``language``, built in ``where``."""
    home = folder(where / language.replace(" ", "-"))
    if language == "python":
        shutil.copy(ROOT / "sample_bots" / "first_bot.py", home / "bot.py")
        return f"{sys.executable} {home / 'bot.py'}"
    if language == "node":
        need("node", package="nodejs")
        shutil.copy(ROOT / "sample_bots" / "random_bot.js", home / "bot.js")
        return f"{shutil.which('node')} {home / 'bot.js'} --seed 1"
    if language == "c":
        need("gcc", package="gcc")
        subprocess.run(["gcc", "-O2", "-o", str(home / "bot"), str(ROOT / "sample_bots" / "c" / "echo_first.c")], check=True, timeout=HANG)
        return str(home / "bot")
    if language == "java":
        need("java", "javac", package="default-jdk-headless")
        (home / "Main.java").write_text(JAVA_BOT)
        subprocess.run(["javac", "Main.java"], cwd=home, check=True, timeout=HANG)
        return f"java -XX:+UseSerialGC -Xmx256m -XX:CompressedClassSpaceSize=64m -cp {home} Main"
    if language == "go":
        need("go", package="golang-go")
        (home / "main.go").write_text(GO_BOT)
        env = {**os.environ, "GOCACHE": str(where / "gocache"), "GOPATH": str(where / "gopath"), "GO111MODULE": "off"}
        subprocess.run(["go", "build", "-o", str(home / "bot"), str(home / "main.go")], check=True, timeout=HANG, env=env)
        return str(home / "bot")
    if language == "java behind a shell script":
        # the JVM's launcher finds its libraries through /proc/self/exe, which must name java, not sh
        need("java", "javac", package="default-jdk-headless")
        (home / "Main.java").write_text(JAVA_BOT)
        subprocess.run(["javac", "Main.java"], cwd=home, check=True, timeout=HANG)
        (home / "run.sh").write_text('#!/bin/sh\nexec java -XX:+UseSerialGC -Xmx256m -XX:CompressedClassSpaceSize=64m -cp "$(dirname "$0")" Main\n')
        (home / "run.sh").chmod(0o755)
        return str(home / "run.sh")
    need("dotnet", package="dotnet-sdk-8.0 (Microsoft's packages; not in Debian)")
    subprocess.run(["dotnet", "new", "console", "-o", str(home), "--force"], check=True, timeout=HANG, capture_output=True)
    (home / "Program.cs").write_text(CSHARP_BOT)
    subprocess.run(["dotnet", "publish", "-c", "Release", "-o", str(home / "out")], cwd=home, check=True, timeout=HANG, capture_output=True)
    return f"dotnet {home / 'out' / (home.name + '.dll')}"


@pytest.mark.parametrize("language", ["python", "node", "c", "java", "java behind a shell script", "go", "csharp"])
def test_a_bot_in_each_language_plays_in_the_sandbox(tmp_path, language):
    command = build(language, tmp_path)
    first = folder(tmp_path / "first")
    shutil.copy(ROOT / "sample_bots" / "first_bot.py", first / "first.py")
    for p in tmp_path.rglob("*"):
        p.chmod(p.stat().st_mode | (0o755 if p.is_dir() or os.access(p, os.X_OK) else 0o644))
    log = tmp_path / "m.jsonl"
    done = subprocess.run([sys.executable, "-m", "referee", "match", command, f"{sys.executable} {first / 'first.py'}", "--sandbox",
                           "--variant", "block", "--games", "1", "--seed", "424242", "--log", str(log), "--memory-mb", "1024",
                           "--name", "bot", "--name", "first"],
                          capture_output=True, text=True, timeout=HANG, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    stderr = "".join(p.read_text(errors="replace") for p in log.with_name("m.stderr").glob("*"))
    rows = [line.split() for line in done.stdout.splitlines() if line.split()[:1] in (["bot"], ["first"])]
    rows = rows[1:]  # the header begins with "bot" too
    assert len(rows) == 2 and all(row[-1] == "none" for row in rows), done.stdout + stderr  # no fault, either bot
    assert '"k":"play"' in log.read_text()
