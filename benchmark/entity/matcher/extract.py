"""The entities of a line nobody annotated: what a caller said (a bank's expected text) read for the spans the
matcher then looks for in a transcriber's text (`entity_marks`). The benchmark's clips carry annotated spans; a
caller's line does not, so its spans are found here, by rule, in five categories:

- time: a clock time ("10:45", "8.30", "ten forty five", "seven o'clock", "half past eight", "quarter to
  eight"), or an hour with "am"/"pm" ("3 pm", "nine a.m."), the "am"/"pm" included in the span;
- date: a month with its day and year where they are said ("March 4th, 2026", "the twelfth of March"), a month
  alone, a weekday ("Tuesday"), or a written date ("12/03/2026", "2026-03-12");
- id: a code or reference: a word of letters and digits ("3B", "AB123", "F-16"), a number of five digits or more
  or digits in groups ("471920", "555-0142"), or three or more digits said or written one by one ("four seven
  one", "4 7 1");
- number: any other number, written ("4", "2,000", "$20", "3.5", "20%") or said ("twenty-one", "a hundred",
  "fourth"); a lone "one", "first" or "second" is left out (too often not a number: "that one", "just a second");
- name: a run of capitalized words that does not open a sentence ("Maria", "Main Street", "St. Mary's",
  "EPA"), with "of" between two of them ("Bank of America"), ending at punctuation; a capitalized word that opens
  a sentence begins a name only when the next word is capitalized too, and a common word ("Hello", "Yes",
  "The", "You"...) never begins one.
  A line typed without capitals (a live transcript) has no names.

A word belongs to one span at most: times first, then dates, ids, numbers, names. Each span is the line's own
words, edge punctuation left off. Pure, standard library only."""

import re
from dataclasses import dataclass

from .canon import _raw_tokens
from .match import entity_found
from .numbers import _HOURS, _ORDINAL_SMALL, _SMALL, _UNITS, _clock_text, _read_clock, _read_number

NAME, TIME, DATE, NUMBER, ID = "name", "time", "date", "number", "id"
CATEGORIES = (NAME, TIME, DATE, NUMBER, ID)  # in the order the pages list them

MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
# A capitalized word that does not begin a name, even before another capitalized word ("Thank You").
OPENERS = frozenset(
    """a an and are at but can could did do does for from good great he hello hey hi how i if in is it just
    my no now oh ok okay our please she so sorry sure thank thanks that the then there they this to uh um was
    we well what when where who why would yeah yes you your""".split()
)
NOT_A_NAME = frozenset({"i", "i'm", "i'll", "i've", "i'd"})
LONE_NOT_NUMBERS = frozenset({"one", "first", "second"})
MERIDIEM = frozenset({"am", "pm"})

_WORD = re.compile(r"\S+")
_EDGE = ".,;:!?\"'()[]{}…“”‘’"
_SENTENCE_END = re.compile(r"[.!?…]['\")\]”’]*$")
_CLOCK = re.compile(r"[0-9]{1,2}[:.][0-9]{2}")
_WRITTEN_DATE = re.compile(r"[0-9]{1,4}([/-])[0-9]{1,2}\1[0-9]{1,4}")
_DIGITS = re.compile(r"[$€£]?[0-9][0-9,]*(?:\.[0-9]+)?(?:%|st|nd|rd|th)?")
_HAS_DIGIT = re.compile(r"[0-9]")
_HAS_LETTER = re.compile(r"[^\W\d_]")
_GROUPED_DIGITS = re.compile(r"[0-9]+(?:[-/][0-9]+)+")
_DAY_NUMBER = re.compile(r"([0-9]{1,2})(?:st|nd|rd|th)?")
_YEAR = re.compile(r"[0-9]{4}")


@dataclass(frozen=True)
class Entity:
    """A span of a line (its own words) and its category (one of CATEGORIES)."""

    text: str
    category: str


@dataclass(frozen=True)
class _Word:
    raw: str  # as written, edge punctuation left off
    start: int  # where it starts and ends in the line
    end: int
    key: str  # lower case, edge punctuation and a trailing "'s" left off
    opens: bool  # it opens a sentence
    capital: bool  # it starts with a capital letter
    stop: bool  # punctuation follows it (a comma, a full stop...): a name ends there


def _words(text: str) -> list[_Word]:
    words = []
    opens = True
    for m in _WORD.finditer(text):
        raw = m.group()
        stripped = raw.strip(_EDGE)
        if stripped:
            left = raw.index(stripped)
            start = m.start() + left
            key = stripped.lower().replace("’", "'")
            stop = raw[left + len(stripped) :] != "" and not _is_initial(raw)
            words.append(
                _Word(stripped, start, start + len(stripped), key, opens, stripped[0].isupper(), stop)
            )
        opens = bool(_SENTENCE_END.search(raw)) and not _is_initial(raw)
    return words


def _is_initial(raw: str) -> bool:
    """ "Dr." "St." "J." "p.m.": a dot that does not end the sentence (a short word or letters with dots)."""
    core = raw.rstrip(".")
    return raw.endswith(".") and (len(core) <= 2 or "." in core or core.lower() in ("mrs", "mr", "dr", "st"))


def _number_words(word: _Word) -> list[str]:
    """The canonical words of one written word (the matcher's own reading: "twenty-one" is two)."""
    return _raw_tokens(word.raw)[0]


def _spoken_end(words: list[_Word], i: int, reader) -> int | None:
    """Where a spoken number or time read by `reader` (numbers._read_number / _read_clock) starting at words[i]
    ends (the index after its last word), or None. A word the matcher reads in pieces ("twenty-one") counts whole;
    a reading that ends inside a word is none."""
    pieces, owner = [], []
    for j in range(i, min(len(words), i + 12)):
        for piece in _number_words(words[j]):
            pieces.append(piece)
            owner.append(j)
    if not pieces or owner[0] != i:
        return None
    found = reader(pieces, 0)
    if found is None:
        return None
    used = found[1]
    last = owner[used - 1]
    if used < len(owner) and owner[used] == last:
        return None  # it ends inside a word
    return last + 1


def _time_at(words, i) -> int | None:
    w = words[i]
    end = None
    if _CLOCK.fullmatch(w.key) and _clock_text(w.key):
        if ":" not in w.key and not (i + 1 < len(words) and _meridiem(words[i + 1])):
            return None  # "3.50" is a number unless "am" or "pm" follows
        end = i + 1
    elif _meridiem(w):
        return None
    else:
        end = _spoken_end(words, i, _read_clock)
        if end is None and (w.key.isdecimal() and 1 <= int(w.key) <= 12 or w.key in _HOURS):
            end = i + 1 if i + 1 < len(words) and _meridiem(words[i + 1]) else None
    if end is None:
        return None
    if end < len(words) and _meridiem(words[end]):
        end += 1
    return end


def _meridiem(w: _Word) -> bool:
    return w.key.replace(".", "") in MERIDIEM


def _day_number(words, i) -> int | None:
    """The end of a day of the month at words[i] ("4th", "4", "fourth", "twenty first"), or None."""
    w = words[i]
    m = _DAY_NUMBER.fullmatch(w.key)
    if m:
        return i + 1 if 1 <= int(m.group(1)) <= 31 else None
    if w.key in _SMALL or w.key in _ORDINAL_SMALL or "-" in w.key:
        end = _spoken_end(words, i, _read_number)
        if end is not None:
            value = _raw_value(words, i, end)
            return end if value is not None and 1 <= value <= 31 else None
    return None


def _raw_value(words, i, end) -> int | None:
    pieces = [p for w in words[i:end] for p in _number_words(w)]
    found = _read_number(pieces, 0)
    if found is None or found[1] != len(pieces) or not found[0].isdecimal():
        return None
    return int(found[0])


def _year(words, i) -> int | None:
    w = words[i]
    if _YEAR.fullmatch(w.key):
        return i + 1
    end = _spoken_end(words, i, _read_number)
    if end is not None and end - i >= 2:
        value = _raw_value(words, i, end)
        if value is not None and 1000 <= value <= 2999:
            return end
    return None


def _date_at(words, i) -> tuple[int, int] | None:
    """(start, end) of a date around words[i] where words[i] is a month, a weekday or a written date."""
    w = words[i]
    n = len(words)
    if _WRITTEN_DATE.fullmatch(w.key):
        return i, i + 1
    if w.key in WEEKDAYS:
        return i, i + 1
    if w.key not in MONTHS or (w.key == "may" and not w.capital):
        return None
    start, end = i, i + 1
    # "the twelfth of March", "4th of March"
    if i >= 2 and words[i - 1].key == "of":
        for back in range(max(0, i - 4), i - 1):
            if _day_number(words, back) == i - 1:
                start = back
                break
    elif end < n:
        day = _day_number(words, end)
        if day is not None:
            end = day
    if end < n:
        year = _year(words, end)
        if year is not None:
            end = year
    if w.key == "may" and end == i + 1 and start == i:
        return None  # "May I ask": the month only with its day or year
    return start, end


def _id_at(words, i) -> int | None:
    w = words[i]
    if _HAS_DIGIT.search(w.key) and _HAS_LETTER.search(w.key) and not _DAY_NUMBER.fullmatch(w.key):
        return i + 1
    digits = w.key.replace(",", "")
    if (digits.isdecimal() and len(digits) >= 5 and "," not in w.key) or _GROUPED_DIGITS.fullmatch(w.key):
        return i + 1
    end = i
    while end < len(words) and _one_digit(words[end]) and (end == i or not words[end - 1].stop):
        end += 1
    return end if end - i >= 3 else None


def _one_digit(w: _Word) -> bool:
    return w.key in _UNITS or w.key == "oh" or (len(w.key) == 1 and w.key.isdecimal())


def _number_at(words, i) -> int | None:
    w = words[i]
    if _DIGITS.fullmatch(w.raw):
        end = i + 1
        if end < len(words) and words[end].key in ("hundred", "thousand", "million", "billion"):
            end += 1
        return end
    end = _spoken_end(words, i, _read_number)
    if end is None:
        return None
    if end == i + 1 and w.key in LONE_NOT_NUMBERS:
        return None
    if words[i].key == "a" and end == i + 1:
        return None
    return end


def _name_at(words, i) -> int | None:
    w = words[i]
    if not w.capital or w.key in NOT_A_NAME or not _HAS_LETTER.search(w.key):
        return None
    n = len(words)
    if w.key in OPENERS or (w.opens and (i + 1 >= n or not _name_word(words[i + 1]))):
        return None
    end = i + 1
    while end < n and not words[end - 1].stop:
        nxt = words[end]
        if _name_word(nxt):
            end += 1
        elif nxt.key == "of" and not nxt.stop and end + 1 < n and _name_word(words[end + 1]):
            end += 2
        else:
            break
    return end


def _name_word(w: _Word) -> bool:
    return w.capital and w.key not in NOT_A_NAME and bool(_HAS_LETTER.search(w.key))


# In the order they take words: a word belongs to the first span found on it. A date is found around its month
# (_date_at gives where it starts and ends); the others start at the word they are asked about.
FINDERS = ((TIME, _time_at), (DATE, _date_at), (ID, _id_at), (NUMBER, _number_at), (NAME, _name_at))


def entities(text: str) -> tuple[Entity, ...]:
    """The entities of a line (see the module's docstring), in the order they are said."""
    if not text:
        return ()
    words = _words(text)
    taken = [False] * len(words)
    found: list[tuple[int, Entity]] = []

    def keep(start, end, category):
        if end <= start or any(taken[start:end]):
            return False
        for k in range(start, end):
            taken[k] = True
        span = " ".join(text[words[start].start : words[end - 1].end].split())
        found.append((start, Entity(span, category)))
        return True

    for category, finder in FINDERS:
        for i in range(len(words)):
            if taken[i]:
                continue
            if category == DATE:
                where = _date_at(words, i)
                if where is not None:
                    keep(*where, category)
                continue
            end = finder(words, i)
            if end is not None:
                # a span may not run into a word taken before: cut it there
                stop = next((k for k in range(i, end) if taken[k]), end)
                keep(i, stop, category)
    return tuple(entity for _, entity in sorted(found, key=lambda pair: pair[0]))


@dataclass(frozen=True)
class Mark:
    """One entity of what was said, and whether a transcriber's text has it (the matcher's entity_found)."""

    text: str
    category: str
    kept: bool


def entity_marks(expected: str, hypothesis: str) -> tuple[Mark, ...]:
    """Each entity of the expected text (`entities`) marked kept or lost in the hypothesis."""
    return tuple(Mark(e.text, e.category, entity_found(e.text, hypothesis or "")) for e in entities(expected))
