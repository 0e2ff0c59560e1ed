"""Words the Japanese reading frontend (OpenJTalk's dictionary, which both Japanese engines read through) says
wrongly in comic dialogue, respelled before synthesis. The subtitles keep the lettering as it is.

- Money: a 金 standing alone is read キン ("gold") before most particles, where dialogue means カネ ("money":
  結局金なんだよ, 金をふんだくって, 金さえあれば). Compounds keep their own readings (料金, 奨学金, 金メダル, 裏金):
  a 金 the dictionary joins to a noun before it (闇金, 保証金) or to a number (18金) is left alone, and so is a
  name (金さん, Kin-san).
- A price per point: after a counted point (一点, 1点) the digits that follow were read as the decimals of a
  number (一点10円: "itten ichi zero en"). Written in kanji numerals they are read as a number (いってん じゅうえん).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_DIGITS = "〇一二三四五六七八九"
_SMALL_UNITS = ((1000, "千"), (100, "百"), (10, "十"))
_LARGE_UNITS = ((10**8, "億"), (10**4, "万"))
_AFTER_POINT = re.compile(r"(?<=[〇一二三四五六七八九十百千万0-9]点)([1-9][0-9]{0,7})(?![0-9.,])")
_ADVERBIAL = frozenset({"副詞可能"})
_NOT_A_STEM = frozenset({"副詞", "連体詞", "助詞", "助動詞", "記号", "感動詞", "接続詞", "動詞", "形容詞"})


def _below_10000(number: int) -> str:
    out = []
    for value, unit in _SMALL_UNITS:
        count, number = divmod(number, value)
        if count:
            out.append(("" if count == 1 else _DIGITS[count]) + unit)
    if number:
        out.append(_DIGITS[number])
    return "".join(out)


def kanji_number(number: int) -> str:
    """A positive integer below 10^12 in kanji numerals: 10 -> 十, 14330 -> 一万四千三百三十, 2000 -> 二千."""
    if not 0 < number < 10**12:
        raise ValueError(f"kanji_number: {number} is out of range")
    out = []
    for value, unit in _LARGE_UNITS:
        count, number = divmod(number, value)
        if count:
            out.append(_below_10000(count) + unit)
    if number:
        out.append(_below_10000(number))
    return "".join(out)


def numbers_after_point(text: str) -> str:
    """一点10円 -> 一点十円: the digits after a counted point said as a number, not as decimals."""
    return _AFTER_POINT.sub(lambda match: kanji_number(int(match.group(1))), text)


def _money(node: Mapping[str, object], before: Mapping[str, object] | None, after: Mapping[str, object] | None) -> bool:
    if node["string"] != "金" or node["read"] != "キン" or node["pos"] != "名詞":
        return False
    if after is not None and after["pos_group2"] == "人名":
        return False  # 金さん, 金くん: a name (Kin-san), not money
    if node["pos_group1"] == "一般":
        return True
    if node["pos_group1"] != "接尾" or before is None:
        return False
    # 結局金, 全部金: an adverbial noun or a word that is no noun stem before it, not 闇金 or 保証金
    return before["pos_group1"] in _ADVERBIAL or before["pos"] in _NOT_A_STEM


def money_as_kane(text: str) -> str:
    """金 meaning money respelled カネ where the dictionary would say キン (it is left as it is without pyopenjtalk)."""
    if "金" not in text:
        return text
    try:
        import pyopenjtalk
    except ImportError:
        return text
    nodes = pyopenjtalk.run_frontend(text)
    respell: set[int] = set()
    seen = 0
    for index, node in enumerate(nodes):
        count = node["string"].count("金")
        after = nodes[index + 1] if index + 1 < len(nodes) else None
        if count and _money(node, nodes[index - 1] if index else None, after):
            respell.add(seen)
        seen += count
    if not respell:
        return text
    parts = text.split("金")
    out = [parts[0]]
    for index, part in enumerate(parts[1:]):
        out.append(("カネ" if index in respell else "金") + part)
    return "".join(out)


def respell_japanese(text: str) -> str:
    """Both respellings above, for a line already normalised for speech."""
    return money_as_kane(numbers_after_point(text))
