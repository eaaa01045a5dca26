"""Shell completion of prereg (bash, zsh, fish), written by shtab from prereg's own parsers.

:func:`parser` is the whole command line as argparse knows it: the global options, every core
command with its options, and every study of the project (when there is one) with the
commands and options its spec declares, built by the same code the commands are parsed with
(``cli._add_core_commands``, ``cli.add_study_commands``); shtab turns it into the shell's
script.  Paths complete as files (``--project`` as a folder).  The script lists the studies as
they are when it is made, so it is made again (``eval`` at the shell's start) after a study is
added.
"""

from __future__ import annotations

import argparse

from prereg.errors import UserError

SHELLS = ("bash", "zsh", "fish")


def _shtab():
    try:
        import shtab
    except ImportError:
        raise UserError(
            "prereg completion needs shtab, a dependency of prereg: reinstall prereg"
            " (pip install -e .) or pip install shtab"
        ) from None
    return shtab


def _files(parser: argparse.ArgumentParser, shtab) -> None:
    """Complete the values of a parser's arguments (and its subcommands') as file names; a
    flag, a choice or a subcommand keeps its own completion."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _files(child, shtab)
        elif action.nargs != 0 and not action.choices and action.dest != "help":
            action.complete = shtab.FILE


def parser(project=None) -> argparse.ArgumentParser:
    """prereg's command line: core commands, and each study of ``project`` with its commands."""
    from prereg import cli
    from prereg.compiler.project import CORE_COMMANDS

    shtab = _shtab()
    top = cli._base_parser()
    top.prog = "prereg"
    sub = top.add_subparsers(dest="cmd", metavar="COMMAND")
    cli._add_core_commands(sub)
    _files(top, shtab)
    for action in top._actions:
        if "--project" in action.option_strings:
            action.complete = shtab.DIRECTORY
    if project is not None:
        from prereg.compiler.init import ID
        from prereg.study import load_generated

        for path in project.spec_files():
            sid = path.stem
            # a name that is no study id never compiles, and is not offered: bash's compgen -W
            # expands the words it offers, so "a$(cmd).yaml" ran cmd at the first <Tab>
            if sid in CORE_COMMANDS or not ID.match(sid):
                continue
            try:
                module = load_generated(project, sid)
            except UserError:  # not compiled yet: offered without its commands
                sub.add_parser(sid, help=f"study {sid} (not compiled)")
                continue
            study = sub.add_parser(sid, help=f"the commands of study {sid}")
            if module.COMMANDS:
                cli.add_study_commands(study.add_subparsers(dest="command"), module)
            _files(study, shtab)
    return top


def script(shell: str, project=None) -> str:
    """The completion script of ``shell`` for prereg and ``project``'s studies."""
    if shell not in SHELLS:
        raise UserError(f"completion: unknown shell {shell!r} (one of {', '.join(SHELLS)})")
    shtab = _shtab()
    return shtab.complete(parser(project), shell=shell)
