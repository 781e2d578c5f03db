"""What a refused unit most likely meant: "did you mean 'lbs'?" for the spellings people type.

A hint never accepts anything: the unit is still refused, and the hint only names a spelling the input
already accepts (its `accepted_units`, whose factors live in formulas/units.yaml). Accepting a unit is a
clinical decision made in the registry; a guess stays a question to the person who typed it. There is no
fuzzy matching: 'µmol/L' is one letter from 'mmol/L' and a thousand times smaller, so a hint comes only
from a known spelling, a difference of case, an ASCII micro ('umol/L', 'mcg') or an amount typed for a
concentration.
"""
from __future__ import annotations

from solver.library.units import MICRO_SIGN, normalise_unit

# spellings people type (compared without case) -> the registry's spelling they usually stand for, where the registry
# does not read them itself (its aliases, formulas/units.yaml `spellings.units`, are read, not hinted: 'lb', 'inches')
SPELLINGS: dict[str, str] = {
    "lbs.": "lbs", "kg.": "kg", "kilo": "kg", "kilos": "kg",
    "gram": "g", "grams": "g", "gm": "g",
    '"': "in", "\u2033": "in", "''": "in", "in.": "in",
    "'": "ft", "\u2032": "ft", "ft.": "ft", "cm.": "cm",
    "y": "years", "y.o.": "years", "mo": "months",
}
_AMOUNTS = ("mmol", "µmol", "mol", "mEq", "mg", "µg", "g", "ng", "pmol")  # an amount or a mass, not a concentration


def _micro(unit: str) -> str:
    """'umol/L' or 'mcmol/L' in the registry's spelling of micro ('µmol/L')."""
    for ascii_micro in ("mc", "u"):
        if unit.startswith(ascii_micro) and len(unit) > len(ascii_micro):
            return MICRO_SIGN + unit[len(ascii_micro):]
    return unit


def unit_hint(unit: object, accepted: list[str]) -> str:
    """' (did you mean ...?)' naming the accepted spelling(s) `unit` most likely stands for, '' when none is
    close; for an amount given where a concentration is asked ('mmol' for 'mmol/L'), it says so."""
    if not isinstance(unit, str) or not accepted:
        return ""
    typed = normalise_unit(unit.strip())
    folded = {a.casefold(): a for a in accepted}
    if typed in _AMOUNTS or typed.casefold() in {a.casefold() for a in _AMOUNTS}:
        per = [a for a in accepted if a.casefold().startswith(_micro(typed).casefold() + "/")]
        if per and typed not in accepted:
            return (f" ({unit!r} is an amount, not a concentration: did you mean "
                    f"{' or '.join(repr(p) for p in per)}?)")
    found = []
    for guess in (SPELLINGS.get(typed.casefold()), typed, _micro(typed)):
        if guess is not None and guess.casefold() in folded:
            found.append(folded[guess.casefold()])
    found = [f for f in dict.fromkeys(found) if f != unit]
    return f" (did you mean {' or '.join(repr(f) for f in found)}?)" if found else ""
