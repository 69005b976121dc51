"""The command line's help and options: every command's help shows what its source says
(bracketed words are not eaten as rich markup), and a short option means one thing everywhere,
as the README lists."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from support.commands import cli

from referee.commands import app

ROOT = Path(__file__).resolve().parents[2]


# typer carries a click of its own (typer._click): its classes are reached through typer.core.
Command = typer.core.TyperCommand | typer.core.TyperGroup


def subcommands(cmd: Command) -> dict[str, Command]:
    return dict(getattr(cmd, "commands", {}))


def commands() -> Iterator[tuple[list[str], Command]]:
    """Every command and group of ``referee``, with the words that name it."""

    def walk(cmd: Command, path: list[str]) -> Iterator[tuple[list[str], Command]]:
        yield path, cmd
        for name, sub in subcommands(cmd).items():
            yield from walk(sub, [*path, name])

    yield from walk(typer.main.get_command(app), [])


def options(cmd: Command) -> list[typer.core.TyperOption]:
    return [p for p in cmd.params if isinstance(p, typer.core.TyperOption) and not p.hidden]


def source_texts(cmd: Command) -> list[str]:
    texts = [cmd.help or "", cmd.epilog or ""]
    texts += [p.help or "" for p in options(cmd)]
    texts += [p.help or "" for p in cmd.params if isinstance(p, typer.core.TyperArgument)]
    return texts


def bracketed(text: str) -> list[str]:
    """Each bracketed word of a help string as it must be printed (``\\[a|b]`` is ``[a|b]``)."""
    return ["[" + inner + "]" for inner in re.findall(r"\\?\[([^\]\n]*)\]", text)]


def rendered_help(path: list[str]) -> str:
    res = cli(*path, "--help", env={"COLUMNS": "400", "TERMINAL_WIDTH": "400"})
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def test_the_search_finds_the_bracketed_words_it_must():
    assert bracketed("every tile as \\[a|b], the line") == ["[a|b]"]
    assert bracketed("pip install 'referee\\[cluster]'") == ["[cluster]"]
    assert bracketed("nothing here") == []


@pytest.mark.parametrize("path", [p for p, _ in commands()], ids=lambda p: " ".join(p) or "referee")
def test_every_bracketed_word_of_the_source_is_in_the_rendered_help(path):
    cmd = {tuple(p): c for p, c in commands()}[tuple(path)]
    shown = rendered_help(path)
    for text in source_texts(cmd):
        for word in bracketed(text):
            assert word in shown, (word, shown)
    # a subcommand's one-line summary, as the group lists it
    for name, sub in subcommands(cmd).items():
        for word in bracketed((sub.help or "").split("\n\n")[0]):
            assert word in shown, (name, word, shown)


def test_the_bracketed_words_that_used_to_vanish_are_shown():
    assert "every tile as [a|b], the line of play" in rendered_help(["replay"])
    assert "every tile as [a|b], the line of play" in rendered_help([])
    assert "pip install 'referee[cluster]'" in rendered_help(["league", "run"])


def short_options() -> dict[str, set[str]]:
    """Each short option of any command and the long options it stands for."""
    seen: dict[str, set[str]] = {}
    for _, cmd in commands():
        for p in options(cmd):
            names = [*p.opts, *p.secondary_opts]
            longs = [n for n in names if n.startswith("--")]
            for short in (n for n in names if not n.startswith("--")):
                seen.setdefault(short, set()).update(longs)
    return seen


@pytest.mark.parametrize("path", [p for p, _ in commands()], ids=lambda p: " ".join(p) or "referee")
def test_every_paragraph_of_a_help_is_one_line_in_the_source_so_it_wraps_whole(path):
    """The help keeps a docstring's line breaks: a paragraph written over two lines broke in the
    middle of a sentence at every width (issue 40: `referee play --help`)."""
    cmd = {" ".join(p): c for p, c in commands()}[" ".join(path)]
    for paragraph in (cmd.help or "").split("\n\n"):
        assert "\n" not in paragraph.strip(), paragraph
    shown = cli(*path, "--help", env={"COLUMNS": "80"}).stdout
    for paragraph in (cmd.help or "").split("\n\n"):
        words = paragraph.replace("\\[", "[").split()  # rich's escaped bracket is shown bare
        assert " ".join(words) in " ".join(shown.split()), paragraph


def test_a_short_option_means_one_thing_in_every_command():
    seen = short_options()
    assert seen, "no short options found"
    for short, longs in seen.items():
        assert len(longs) == 1, f"{short} stands for {sorted(longs)}"


def test_the_readme_lists_every_short_option_as_the_commands_have_it():
    readme = " ".join((ROOT / "README.md").read_text().split())
    listed = dict(re.findall(r"`(-[A-Za-z])` `(--[a-z-]+)`", readme))
    actual = {short: next(iter(longs)) for short, longs in short_options().items()}
    actual["-h"] = "--help"
    assert listed == actual


def test_report_answers_the_old_dash_o_with_the_new_spelling(tmp_path):
    log = tmp_path / "m.jsonl"
    log.write_text("{}\n")
    res = cli("report", str(log), "-o", str(tmp_path / "site"))
    assert res.exit_code == 2
    assert "-o is --option (a game option) in every command" in res.output and "-O" in res.output
    assert not (tmp_path / "site").exists()
