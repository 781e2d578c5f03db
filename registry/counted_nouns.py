"""Counted nouns in messages: "1 problem", "3 problems", never "problem(s)"."""
from __future__ import annotations

_IRREGULAR = {"entry": "entries"}


def counted(n: int, noun: str, many: str | None = None) -> str:
    """`n` and `noun`, the noun in the plural unless n is 1 ("0 cases", "1 case", "2 cases")."""
    return f"{n} {noun if n == 1 else many or plural(noun)}"


def plural(noun: str) -> str:
    """The plural of the few nouns our messages count (an English rule good enough for them)."""
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    head, _, last = noun.rpartition(" ")  # "approval by a chair" is not counted this way; "signed approval" is
    return f"{head} {_plural_word(last)}".strip() if head else _plural_word(last)


def _plural_word(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def agree(n: int, one: str, many: str) -> str:
    """The word that agrees with a count: `one` for 1, else `many` ("1 file differs", "2 files differ")."""
    return one if n == 1 else many
