"""Errors that reach a user as a message, never as a traceback."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input: printed as ``error: <message>`` with ``exit_code``.

    ``problems`` optionally lists several messages (one per problem); the CLI prints each.
    """

    def __init__(self, message: str, *, exit_code: int = 2, problems: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.problems = list(problems or [])

    def lines(self) -> list[str]:
        if self.problems:
            return [self.message, *("  " + p for p in self.problems)]
        return [self.message]
