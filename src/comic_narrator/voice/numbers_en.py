"""English numbers as words: cardinals, years, decimals, ordinals, clock times, money and percentages."""

from __future__ import annotations

import re

ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
ORDINAL_ENDINGS = {
    "one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth",
    "twelve": "twelfth",
}  # fmt: skip
CURRENCIES = {"$": ("dollar", "dollars"), "£": ("pound", "pounds"), "€": ("euro", "euros"), "¥": ("yen", "yen")}
SUBUNITS = {"$": ("cent", "cents"), "£": ("penny", "pence"), "€": ("cent", "cents")}
"""What a hundredth of the currency is called; yen have none in use."""

_ORDINAL = re.compile(r"\b(\d+)(st|nd|rd|th)\b", re.IGNORECASE)
_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
_DIGITS = r"\d+(?:,\d{3})*(?!\d)"
"""1944 or 1,200: a comma inside a number only before three digits, so one after it (In 1944, we) stays a pause."""
_MONEY = re.compile(rf"([$£€¥])\s?({_DIGITS}(?:\.\d{{1,2}})?)")
_PERCENT = re.compile(rf"({_DIGITS}(?:\.\d+)?)\s?%")
_NUMBER = re.compile(rf"{_DIGITS}(?:\.\d+)?")
_SPACED_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d.,])")
"""50 000: thousands set apart by a space, as French and many translations print them."""
_DECADE = re.compile(r"(?<![\w'])'?(\d{0,2}\d0)'?s\b")
"""The 1980s, the '80s, the 20s: a decade (or a century, 1900s) said as a plural."""
_UNIT = re.compile(r"(?<=\d)(ft|km|kg|cm|mm|lbs?|mph|x|k)\b", re.IGNORECASE)
UNITS = {
    "ft": "feet", "km": "kilometres", "kg": "kilos", "cm": "centimetres", "mm": "millimetres", "lb": "pounds",
    "lbs": "pounds", "mph": "miles an hour", "x": "times", "k": "thousand",
}  # fmt: skip
"""A unit written against its number (5ft, 10x): said as words."""
_DATE = re.compile(
    r"\b((?i:january|february|march|april|may|june|july|august|september|october|november|december)"
    r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?)\s+([1-9]|[12]\d|3[01])(?=\s*(?:[,.!?;:]|$|\d{4}\b))"
)
"""December 14, June 5, 1944, Sept. 3: a day after its month is an ordinal (a month before a number that a word
follows is left alone: the troops march 20 miles)."""
_HALF_DAY = re.compile(r"(?<=\d)\s*([ap])(?:\.\s?m\.|\s?m\b)", re.IGNORECASE)
"""9am, 2:00 AM, 10:30 p.m.: said "a m" and "p m" (AM alone is the word am, a.m. a sentence's end)."""


def number_to_words(value: int) -> str:
    """English words for 0 <= value < 10**12 (comic dialogue rarely needs more)."""
    if value < 20:
        return ONES[value]
    if value < 100:
        tens, ones = divmod(value, 10)
        return TENS[tens] + ("-" + ONES[ones] if ones else "")
    if value < 1000:
        hundreds, rest = divmod(value, 100)
        return ONES[hundreds] + " hundred" + (" " + number_to_words(rest) if rest else "")
    for size, name in ((10**9, "billion"), (10**6, "million"), (1000, "thousand")):
        if value >= size:
            head, rest = divmod(value, size)
            return number_to_words(head) + f" {name}" + (" " + number_to_words(rest) if rest else "")
    return str(value)


def ordinal_words(value: int) -> str:
    """21 -> twenty-first, 12 -> twelfth, 100 -> one hundredth."""
    words = number_to_words(value)
    head, sep, last = words.rpartition("-") if "-" in words.split(" ")[-1] else words.rpartition(" ")
    if last in ORDINAL_ENDINGS:
        last = ORDINAL_ENDINGS[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return head + sep + last


def _cardinal(digits: str) -> str:
    digits = digits.replace(",", "")
    if "." in digits:
        whole, frac = digits.split(".", 1)
        return number_to_words(int(whole or "0")) + " point " + " ".join(ONES[int(d)] for d in frac)
    if len(digits) == 4 and 1100 <= int(digits) <= 2099 and int(digits) % 100 != 0:
        # Years read in pairs: 1987 -> nineteen eighty-seven.
        head, tail = divmod(int(digits), 100)
        return number_to_words(head) + " " + (number_to_words(tail) if tail >= 10 else "oh " + ONES[tail])
    if len(digits) > 12:
        return " ".join(ONES[int(d)] for d in digits)
    return number_to_words(int(digits))


def _time(match: re.Match[str]) -> str:
    hour, minute = int(match.group(1)), int(match.group(2))
    if minute == 0:
        return number_to_words(hour) + " o'clock"
    return number_to_words(hour) + " " + (number_to_words(minute) if minute >= 10 else "oh " + ONES[minute])


def _money(match: re.Match[str]) -> str:
    """$2.50 -> two dollars fifty cents, £2.50 -> two pounds fifty (British usage drops "pence" after pounds),
    $0.99 -> ninety-nine cents, £0.01 -> one penny, ¥1.5 -> one point five yen."""
    symbol = match.group(1)
    one, many = CURRENCIES[symbol]
    amount = match.group(2).replace(",", "")
    whole_digits, _, fraction = amount.partition(".")
    whole, hundredths = int(whole_digits), int(fraction.ljust(2, "0")) if fraction else 0
    if not hundredths:
        return number_to_words(whole) + " " + (one if whole == 1 else many)
    if symbol not in SUBUNITS:
        return _cardinal(amount) + " " + many
    sub_one, sub_many = SUBUNITS[symbol]
    small = number_to_words(hundredths) + " " + (sub_one if hundredths == 1 else sub_many)
    if not whole:
        return small
    words = number_to_words(whole) + " " + (one if whole == 1 else many)
    # "two pounds fifty", but "two pounds one penny": a bare "one" after pounds would not read as money.
    return words + " " + (number_to_words(hundredths) if symbol == "£" and hundredths >= 10 else small)


def _decade(match: re.Match[str]) -> str:
    digits = match.group(1)
    if len(digits) == 4 and digits.endswith("00"):
        if digits[:2] in ("10", "20"):  # 1000s of people, the 2000s
            return "thousands" if digits == "1000" else number_to_words(int(digits)) + "s"
        return number_to_words(int(digits[:2])) + " hundreds"  # the 1900s: the nineteen hundreds
    words = _cardinal(digits)
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


def _apart(match: re.Match[str], words: str) -> str:
    """``words`` in place of the digits, set apart from letters the digits were written against (7godmothers,
    MP3, R2D2): glued on, the voice says one made-up word."""
    text = match.string
    before = match.start() > 0 and text[match.start() - 1].isalpha()
    after = match.end() < len(text) and text[match.end()].isalpha()
    return (" " if before else "") + words + (" " if after else "")


def numbers_to_words(text: str) -> str:
    """Every digit sequence in ``text`` said the way a reader would say it."""
    text = _HALF_DAY.sub(lambda m: f" {m.group(1).lower()} m", text)
    text = _MONEY.sub(_money, text)
    text = _PERCENT.sub(lambda m: _cardinal(m.group(1)) + " percent", text)
    text = _TIME.sub(_time, text)
    text = _ORDINAL.sub(lambda m: ordinal_words(int(m.group(1))), text)
    text = _DATE.sub(lambda m: f"{m.group(1)} {ordinal_words(int(m.group(2)))}", text)
    text = _SPACED_THOUSANDS.sub(lambda m: m.group(0).replace(" ", ""), text)
    text = _DECADE.sub(_decade, text)
    text = _UNIT.sub(lambda m: " " + UNITS[m.group(1).lower()], text)
    return _NUMBER.sub(lambda m: _apart(m, _cardinal(m.group(0))), text)
