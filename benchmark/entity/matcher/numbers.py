"""Spoken numbers read as digits, for the entity matcher's canonical tokens (benchmark.entity.matcher):
cardinals, spoken years, ordinals, decimals, digits with a scale word, and clock times. Pure, standard library
only."""

import re
from decimal import Decimal

_CLOCK_TOKEN = re.compile(r"([0-9]{1,2})[:.]([0-9]{2})")
_NUMBER_TOKEN = re.compile(r"[0-9]+(?:\.[0-9]+)?")

_UNITS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine".split())}
_TEENS = {
    w: n + 10
    for n, w in enumerate(
        "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: (n + 2) * 10 for n, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
_ORDINAL_UNITS = {
    w: n + 1 for n, w in enumerate("first second third fourth fifth sixth seventh eighth ninth".split())
}
_ORDINAL_TEENS = {
    w: n + 10
    for n, w in enumerate(
        "tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split()
    )
}
_ORDINAL_TENS = {
    w: (n + 2) * 10
    for n, w in enumerate(
        "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth".split()
    )
}
_SMALL = {**_UNITS, **_TEENS, **_TENS}
_ORDINAL_SMALL = {**_ORDINAL_UNITS, **_ORDINAL_TEENS, **_ORDINAL_TENS}
_BIG_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORDINAL_BIG_SCALES = {w + "th": n for w, n in _BIG_SCALES.items()}
_ALL_BIG_SCALES = {**_BIG_SCALES, **_ORDINAL_BIG_SCALES}
_SCALES = {"hundred", "hundredth", *_ALL_BIG_SCALES}
_NUMBER_STARTS = {"a", "quarter", "half", *_SMALL, *_ORDINAL_SMALL, *_SCALES}
_DECIMAL_DIGITS = {**{w: str(n) for w, n in _UNITS.items()}, "oh": "0"}


def _small(words, i):
    """A number below 100 spoken at words[i]: (value, next index, is ordinal), or None."""
    word = words[i]
    if word in _TENS:
        value = _TENS[word]
        following = words[i + 1] if i + 1 < len(words) else ""
        if _UNITS.get(following, 0) > 0:
            return value + _UNITS[following], i + 2, False
        if following in _ORDINAL_UNITS:
            return value + _ORDINAL_UNITS[following], i + 2, True
        return value, i + 1, False
    if word in _SMALL:
        return _SMALL[word], i + 1, False
    if word in _ORDINAL_SMALL:
        return _ORDINAL_SMALL[word], i + 1, True
    return None


def _clock_text(written):
    """'10:45' / '08.30' -> '10:45' / '8:30' when it can be a time of day, else None."""
    clock = _CLOCK_TOKEN.fullmatch(written)
    if clock is None or int(clock.group(1)) > 23 or int(clock.group(2)) > 59:
        return None
    return f"{int(clock.group(1))}:{clock.group(2)}"


_HOURS = {w: n for w, n in _SMALL.items() if 1 <= n <= 12}


def _read_clock(words, i):
    """A spoken time of day at words[i]: ('10:45', next index), or None. "ten forty five", "eight oh five",
    "seven o'clock", "quarter past two", "half past eight", "quarter to eight"."""
    n = len(words)
    word = words[i]
    if word in ("quarter", "half") and i + 2 < n and words[i + 2] in _HOURS:
        hour, relation = _HOURS[words[i + 2]], words[i + 1]
        if relation == "past":
            return f"{hour}:{'15' if word == 'quarter' else '30'}", i + 3
        if relation == "to" and word == "quarter":
            return f"{(hour - 2) % 12 + 1}:45", i + 3
        return None
    hour = _HOURS.get(word)
    if hour is None or i + 1 >= n:
        return None
    following = words[i + 1]
    if following == "oclock":
        return f"{hour}:00", i + 2
    if following in ("oh", "o") and i + 2 < n and _UNITS.get(words[i + 2], 0) > 0:
        minutes, j = _UNITS[words[i + 2]], i + 3
    else:
        small = _small(words, i + 1)
        if small is None or small[2] or not 10 <= small[0] <= 59:
            return None
        minutes, j = small[0], small[1]
    if j < n and words[j] in _SCALES:
        return None
    return f"{hour}:{minutes:02d}", j


def _format_number(value):
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def _read_number(words, i):
    """Read the spoken number starting at words[i]: (digits, next index), or None."""
    n = len(words)
    word = words[i]
    following = words[i + 1] if i + 1 < n else ""
    ordinal = False
    simple = False  # a lone number below 100, which may open a spoken year
    if word == "a" and following in _SCALES:
        group, j = 1, i + 1
    elif word in _SCALES:
        group, j = 1, i
    elif len(word) <= 30 and _NUMBER_TOKEN.fullmatch(word) and following in _SCALES:
        group, j = (int(word) if word.isdecimal() else Decimal(word)), i + 1
    else:
        small = _small(words, i)
        if small is None:
            return None
        group, j, ordinal = small
        simple = not ordinal

    total = 0
    has_hundred = False
    last_scale = None
    while not ordinal and j < n:
        word = words[j]
        if word in ("hundred", "hundredth") and not has_hundred and 0 < group < 100:
            group, j, has_hundred, simple = group * 100, j + 1, True, False
            ordinal = word == "hundredth"
            if not ordinal and j < n:
                k = j + 1 if words[j] == "and" and j + 1 < n else j
                small = _small(words, k)
                if small:
                    added, j, ordinal = small
                    group += added
            continue
        scale = _ALL_BIG_SCALES.get(word)
        if scale and group and (last_scale is None or scale < last_scale):
            total, group, last_scale = total + group * scale, 0, scale
            j, has_hundred, simple = j + 1, False, False
            ordinal = word in _ORDINAL_BIG_SCALES
            if not ordinal and j < n:
                k = j + 1 if words[j] == "and" and j + 1 < n else j
                small = _small(words, k)
                if small:
                    group, j, ordinal = small
            continue
        break
    value = total + group

    if simple and 10 <= value <= 20 and j < n:  # spoken years: "nineteen ninety nine", "twenty oh six"
        after = _small(words, j)
        if after and after[0] >= 10 and (after[1] >= n or words[after[1]] not in _ALL_BIG_SCALES):
            return str(value * 100 + after[0]), after[1]
        if words[j] in ("oh", "o") and j + 1 < n and _UNITS.get(words[j + 1], 0) > 0:
            return str(value * 100 + _UNITS[words[j + 1]]), j + 2

    if not ordinal and j + 1 < n and words[j] == "point" and words[j + 1] in _DECIMAL_DIGITS:
        k = j + 1
        digits = ""
        while k < n and words[k] in _DECIMAL_DIGITS:
            digits += _DECIMAL_DIGITS[words[k]]
            k += 1
        spoken = f"{_format_number(value)}.{digits}"
        scale = _BIG_SCALES.get(words[k]) if k < n else None
        if scale:
            return _format_number(Decimal(spoken) * scale), k + 1
        return spoken, k
    return _format_number(value), j
