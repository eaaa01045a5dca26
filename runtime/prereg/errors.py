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


def said(value, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters with its length told (a row
    id of megabytes is not echoed whole)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[: limit - 1]}… ({size} characters)"
