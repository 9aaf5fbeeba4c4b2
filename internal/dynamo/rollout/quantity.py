"""The canonical string of a Kubernetes quantity: what a Go program writes back after reading one.

A Go `resource.Quantity` parsed from "1.5Gi" marshals as "1536Mi", "0.5" as "500m", "1000" as "1k".
Reproducing that is part of encoding a spec exactly as a Go operator does (see workerhash.py). The
rules, as the apimachinery documents them and as its tests pin them:

- the value is rounded up (away from zero) to a whole number of nano units;
- binary-suffixed values that are whole numbers of at least 1024 in magnitude keep a binary suffix,
  as large as divides them exactly (2048Ki → 2Mi); others fall back to decimal SI;
- decimal values get the largest power-of-1000 suffix that leaves an integer (1500 → 1500,
  2000 → 2k, 0.5 → 500m); exponent notation (1e3) stays exponent notation;
- a string already in that form is kept byte for byte, including a leading "+" or an upper-case
  "E" (the parser remembers such input rather than re-rendering it).
"""

from __future__ import annotations

import re
from decimal import ROUND_UP, Decimal, InvalidOperation, localcontext

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {v // 10: k for k, v in _BINARY_SUFFIXES.items()}
# sign, integer digits, optional fraction, suffix (SI, binary SI, or an exponent)
_SYNTAX = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_INT64_MAX = 2**63 - 1
# Digits an int64 holds safely: the parser's fast path needs the number to fit in this many.
_INT64_DIGITS = 18


class QuantityError(ValueError):
    """Not a Kubernetes quantity."""


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix; format is "DecimalSI", "BinarySI" or "DecimalExponent"."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        return 10, int(suffix[1:]), "DecimalExponent"
    raise QuantityError(f"unknown suffix {suffix!r}")


def _kept_verbatim(num: str, denom: str, base: int, exponent: int, fmt: str) -> bool:
    """Whether Go's parser caches the input string (it then marshals exactly as written)."""
    if fmt == "BinarySI":
        if exponent < 0 or denom:
            return False
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        scale = 0
    else:
        precision = _INT64_DIGITS - (len(num) + len(denom))
        scale = exponent
    if precision < 0:
        return False
    scale -= len(denom)
    if scale < -9:
        return False
    shifted = num + denom
    value = int(shifted)
    if value > _INT64_MAX or value * (2**exponent if fmt == "BinarySI" else 1) > _INT64_MAX:
        return False
    if fmt == "BinarySI":
        return exponent % 10 == 0 and value & 0x07 != 0
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def _strip_factors(value: int, factor: int) -> tuple[int, int]:
    times = 0
    while value != 0 and value % factor == 0:
        value //= factor
        times += 1
    return value, times


def canonical_quantity(text: str) -> str:
    """`text` as Go's resource.Quantity marshals it after parsing it. Raises QuantityError."""
    s = text.strip()
    if not s:
        raise QuantityError("empty quantity")
    if s == "0":
        return s
    m = _SYNTAX.fullmatch(s)
    if m is None:
        raise QuantityError(f"{text!r} is not a quantity")
    sign, digits, denom, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    num = digits.lstrip("0") or "0"
    if not digits and m.group(3) is None:
        raise QuantityError(f"{text!r} has no number")
    base, exponent, fmt = _interpret(suffix)
    if _kept_verbatim(num, denom, base, exponent, fmt):
        return s
    with localcontext() as ctx:
        ctx.prec = 200
        try:
            amount = Decimal(f"{num}.{denom or '0'}")
        except InvalidOperation as err:
            raise QuantityError(f"{text!r} is not a quantity") from err
        amount *= Decimal(base) ** exponent
        if amount != 0:  # whole nano units, rounded away from zero
            amount = amount.quantize(Decimal("1e-9"), rounding=ROUND_UP)
        if amount == 0:
            return "0"
        if fmt == "BinarySI" and amount > _INT64_MAX:  # binary values are capped, not wrapped
            amount = Decimal(_INT64_MAX)
        if fmt == "BinarySI" and amount < 1:
            fmt = "DecimalSI"
        if fmt == "BinarySI" and (amount < 1024 or amount != amount.to_integral_value()):
            fmt = "DecimalSI"
        negative = sign == "-"
        if fmt == "BinarySI":
            number, times = _strip_factors(int(amount), 1024)
            return f"{'-' if negative else ''}{number}{_BINARY_BY_EXPONENT.get(times, '')}"
        # mantissa * 10^exp with exp a multiple of 3 and every other factor of 10 in the mantissa
        _, digits_t, exp = amount.normalize().as_tuple()
        assert isinstance(exp, int)
        mantissa = int("".join(map(str, digits_t)) or "0")
        mantissa, extra = _strip_factors(mantissa, 10)
        exp += extra
        while exp % 3 != 0:
            mantissa *= 10
            exp -= 1
        prefix = "-" if negative else ""
        if fmt == "DecimalExponent":
            return f"{prefix}{mantissa}" + (f"e{exp}" if exp else "")
        return f"{prefix}{mantissa}{_DECIMAL_BY_EXPONENT.get(exp, '')}"
