"""Shell completion of prereg: commands, study ids, a study's commands and options.

``prereg completion bash`` (or ``zsh``) prints a small script that asks prereg itself for the
candidates of the word being completed (``prereg __complete WORD ...``, the words after
``prereg``, the last one being completed), so the study ids and each study's commands come
from the project's specs as compiled, with no list kept anywhere else.  Where a file name or
another value is wanted, the script leaves the shell's own completion to it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from prereg.errors import UserError

HIDDEN = "__complete"

_BASH = """# prereg completion for bash: eval "$(prereg completion bash)" in ~/.bashrc
_prereg_complete() {
    local IFS=$'\\n'
    COMPREPLY=($(prereg __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _prereg_complete prereg
"""

_ZSH = """# prereg completion for zsh: eval "$(prereg completion zsh)" in ~/.zshrc
autoload -U +X bashcompinit && bashcompinit
""" + _BASH.split("\n", 1)[1]


def script(shell: str) -> str:
    return {"bash": _BASH, "zsh": _ZSH}[shell]


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--")]


def candidates(words: Sequence[str]) -> list[str]:
    """The completions of ``words[-1]`` after ``prereg words[:-1]``."""
    from prereg import cli
    from prereg.compiler.project import CORE_COMMANDS, find_project

    words = list(words) or [""]
    cur, before = words[-1], words[:-1]
    top = cli._base_parser(add_help=False)
    project_dir, positional, i = None, [], 0
    while i < len(before):
        w = before[i]
        if w == "--project" and not positional:
            project_dir = before[i + 1] if i + 1 < len(before) else None
            i += 2
            continue
        if not w.startswith("-"):
            positional.append(w)
        i += 1
    if before and before[-1] == "--project" and len(positional) == 0:
        return []  # a folder: the shell completes it
    try:
        project = find_project(project_dir)
        studies = [p.stem for p in project.spec_files()]
    except UserError:
        project, studies = None, []

    def match(options):
        return sorted(o for o in dict.fromkeys(options) if o.startswith(cur))

    if not positional:
        if cur.startswith("-"):
            return match([*_options(top), "--help"])
        return match([*CORE_COMMANDS, *studies])
    first = positional[0]
    if first in studies and first not in CORE_COMMANDS:
        from prereg.study import load_generated

        try:
            module = load_generated(project, first)
            parser = cli._study_parser(project, first, module)
        except UserError:
            return []
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        if len(positional) == 1:
            return match(sub.choices) if not cur.startswith("-") else match(["--help"])
        command = sub.choices.get(positional[1])
        if command is None:
            return []
        # an option's value or a positional argument: the shell completes file names
        return match(_options(command)) if cur.startswith("-") else []
    parser = argparse.ArgumentParser(add_help=True)
    cli._add_core_commands(parser.add_subparsers(dest="cmd"))
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = sub.choices.get(first)
    if command is None:
        return []
    if cur.startswith("-"):
        return match(_options(command))
    choices = [a for a in command._actions if a.choices and not a.option_strings]
    if choices and len(positional) == 1:
        return match(choices[0].choices)
    return []
