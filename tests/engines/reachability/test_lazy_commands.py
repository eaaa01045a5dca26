"""reachability.COMMANDS: the scoring and hand-off handlers are found without importing the
preparation's module, and the whole mapping is the preparation's handlers overridden by the
scoring and then the hand-off ones, as one merged dict was."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def test_score_handler_without_the_preparation_module():
    code = textwrap.dedent(
        """
        import json, sys
        from prereg.engines.reachability import COMMANDS
        found = "score" in COMMANDS and callable(COMMANDS["score"])
        before = "prereg.engines.reachability.commands" in sys.modules
        has_prepare = "prepare" in COMMANDS
        after = "prereg.engines.reachability.commands" in sys.modules
        print(json.dumps([found, before, has_prepare, after]))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [True, False, True, False]


def test_the_mapping_merges_as_before():
    from prereg.engines.reachability import COMMANDS, HANDLER_NAMES
    from prereg.engines.reachability.commands import COMMANDS as PREPARATION
    from prereg.engines.reachability.handoff import HANDOFF_COMMANDS
    from prereg.engines.reachability.score_commands import SCORE_COMMANDS

    merged = dict(PREPARATION)
    merged.update(SCORE_COMMANDS)
    merged.update(HANDOFF_COMMANDS)
    assert list(COMMANDS) == list(merged)
    assert len(COMMANDS) == len(merged)
    assert all(COMMANDS[k] is v for k, v in merged.items())
    assert "no-such-handler" not in COMMANDS
    # `in` answers from the names alone (without importing the modules): they are the tables'
    assert HANDLER_NAMES == set(merged)
