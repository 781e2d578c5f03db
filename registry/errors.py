"""The refusal of a deciding command (a module of its own, importing nothing, so that every command can catch it)."""


class ReleaseError(Exception):
    """A release, fix, approval, rejection, review or lock refused: the message says why; nothing was written."""
