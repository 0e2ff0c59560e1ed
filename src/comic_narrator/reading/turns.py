"""Who speaks each line of grey art: turn-taking hypotheses scored by what the lines say, searched with a beam."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Protocol

from comic_narrator.reading.speech_cues import Pronoun, Register

_REGISTERS: tuple[Register, ...] = ("polite", "blunt", "feminine")
_PRONOUN_KINDS = 7
_ENDINGS = 15


class SpokenLine(Protocol):
    """What the turn model reads of a line (speakers.Utterance has it)."""

    @property
    def page(self) -> int: ...
    @property
    def panel(self) -> int: ...
    @property
    def register(self) -> Register | None: ...
    @property
    def pronoun(self) -> Pronoun | None: ...
    @property
    def calls(self) -> tuple[str, ...]: ...
    @property
    def question(self) -> bool: ...
    @property
    def ending(self) -> str | None: ...
    @property
    def signature(self) -> tuple[float, ...]: ...


@dataclass(frozen=True)
class TurnCues:
    """The turn-taking model: how likely a line is each kind of speaker before its words are read (shares of
    panels), and how the words move that. A weight of 0 turns its cue off."""

    same: float = 0.4
    """Share of panels whose speaker is the previous panel's."""
    alternate: float = 0.4
    """... the speaker before that (the other side of a two-person exchange)."""
    other: float = 0.1
    """... any other character already seen (split between them)."""
    new: float = 0.1
    """... a character not seen before."""
    same_panel: float = 0.9
    """Share of a panel's second and later lines said by whoever said its first."""
    register: float = 1.0
    """Weight of the register's likelihood: each character speaks in its own mix of polite, blunt and feminine
    lines (a Dirichlet-multinomial with ``register_prior`` pseudo-counts; a new character speaks any)."""
    register_prior: float = 0.1
    pronoun: float = 1.0
    """Weight of the first-person pronoun's likelihood (same model, smaller pseudo-counts): a near-fixed trait of
    a character, so one use already says a lot."""
    pronoun_prior: float = 0.02
    ending: float = 0.0
    """Weight of the likelihood of how the line ends (its final particle or punctuation; same model): a habit.
    Off: on the development pages it scored 0.36 against 0.40 without (most lines of everybody end on …)."""
    ending_prior: float = 0.5
    calls: float = 3.0
    """Log-odds against a character known by a name or title the line calls (one does not call oneself)."""
    question: float = 0.7
    """After a question, log-odds moved from the same speaker to the other side (the answer)."""
    beam: int = 16
    """Hypotheses kept while a page is read; the best is committed at the page's end."""
    look: float = 0.0
    """Log-odds per unit of hue distance under ``look_same`` (coloured art): a line whose pointed-at figure's hues
    are near a character's earlier ones would be likelier theirs. Off: on six annotated Pepper&Carrot episodes
    every weight tried (1 to 16) grouped worse than none (``benchmarks/speaker_cues.py --colour``)."""
    look_same: float = 0.5
    """Half-L1 distance of two hue signatures below which they look like the same figure."""


@dataclass(frozen=True)
class Character:
    """What a character's lines so far say about them."""

    registers: tuple[int, ...] = (0, 0, 0)
    pronouns: tuple[tuple[Pronoun, int], ...] = ()
    names: frozenset[str] = frozenset()
    endings: tuple[tuple[str, int], ...] = ()
    looks: tuple[tuple[float, ...], ...] = ()
    """Hue signatures of the figures the character's lines pointed at (the last few)."""


_LOOKS_KEPT = 8
SIGNATURE_HUE_BINS = 12
"""Hue bins at the head of an appearance signature (three lightness bins follow: speakers.appearance_signature)."""


def coloured(signature: tuple[float, ...]) -> bool:
    """A hue signature (coloured art around the figure), as opposed to the lightness bins of grey art."""
    return sum(signature[:SIGNATURE_HUE_BINS]) > 0


def signature_distance(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Half the L1 distance of two normalised histograms (1.0 when either is empty or they differ in kind)."""
    if not a or not b or len(a) != len(b) or sum(a) == 0 or sum(b) == 0:
        return 1.0
    return 0.5 * float(sum(abs(x - y) for x, y in zip(a, b, strict=True)))


@dataclass(frozen=True)
class TurnState:
    """One hypothesis: the characters so far, who spoke last and before, and its log-probability."""

    characters: tuple[Character, ...] = ()
    previous: int = -1
    other_side: int = -1
    last: SpokenLine | None = None
    pending_names: tuple[int, tuple[str, ...]] | None = None
    """Names the last speaker called, owned by whoever answers next."""
    score: float = 0.0
    labels: tuple[int, ...] = ()
    """The character of each line since the last commit."""


def _habit_log(own: dict[str, int], everyone: dict[str, int], kind: str, prior: float, kinds: int) -> float:
    """How much likelier a character is to say ``kind`` (a register, a pronoun) than a character not seen yet:
    log of its Dirichlet-multinomial predictive over the share of ``kind`` among everyone's lines so far. The
    pseudo-counts (``prior`` each) follow that share, so a habit everybody has (blunt lines in a book of men)
    tells little and a rare one (the one polite speaker) tells a lot."""
    share = (everyone.get(kind, 0) + 1) / (sum(everyone.values()) + kinds)
    mine = (own.get(kind, 0) + prior * kinds * share) / (sum(own.values()) + prior * kinds)
    return math.log(mine / share)


@dataclass(frozen=True)
class _Everyone:
    """The habits of all the characters of a hypothesis added up: the baseline a character is compared with."""

    registers: dict[str, int]
    pronouns: dict[str, int]
    endings: dict[str, int]

    @staticmethod
    def of(state: TurnState) -> _Everyone:
        registers: dict[str, int] = {}
        pronouns: dict[str, int] = {}
        endings: dict[str, int] = {}
        for character in state.characters:
            for r, n in zip(_REGISTERS, character.registers, strict=True):
                registers[r] = registers.get(r, 0) + n
            for pronoun, n in character.pronouns:
                pronouns[pronoun] = pronouns.get(pronoun, 0) + n
            for ending, n in character.endings:
                endings[ending] = endings.get(ending, 0) + n
        return _Everyone(registers, pronouns, endings)


def _evidence(cues: TurnCues, character: Character, everyone: _Everyone, line: SpokenLine) -> float:
    """Log-odds the words of ``line`` give for ``character`` against a character not seen before."""
    score = 0.0
    if line.register is not None and cues.register:
        own: dict[str, int] = dict(zip(_REGISTERS, character.registers, strict=True))
        score += cues.register * _habit_log(
            own, everyone.registers, line.register, cues.register_prior, len(_REGISTERS)
        )
    if line.pronoun is not None and cues.pronoun:
        score += cues.pronoun * _habit_log(
            {str(k): n for k, n in character.pronouns},
            everyone.pronouns,
            line.pronoun,
            cues.pronoun_prior,
            _PRONOUN_KINDS,
        )
    if line.ending is not None and cues.ending:
        score += cues.ending * _habit_log(
            dict(character.endings), everyone.endings, line.ending, cues.ending_prior, _ENDINGS
        )
    if character.names.intersection(line.calls):
        score -= cues.calls
    if cues.look and character.looks and coloured(line.signature):
        distance = sum(signature_distance(line.signature, s) for s in character.looks) / len(character.looks)
        score += cues.look * (cues.look_same - distance)
    return score


def _priors(cues: TurnCues, state: TurnState, line: SpokenLine) -> list[float]:
    """Log prior of each known character, then of a new one, before the words are read."""
    last = state.last
    if last is None:
        return [math.log(1.0)]
    same_panel = last.page == line.page and last.panel == line.panel and line.panel >= 0
    if same_panel:
        rest = (1.0 - cues.same_panel) / 3
        same, alternate, other, new = cues.same_panel, rest, rest, rest
    else:
        same, alternate, other, new = cues.same, cues.alternate, cues.other, cues.new
    if state.other_side < 0:
        alternate, other = 0.0, other + alternate
    shift = cues.question if last.question and not same_panel else 0.0
    others = len(state.characters) - 1 - (state.other_side >= 0)
    out: list[float] = []
    for c in range(len(state.characters)):
        if c == state.previous:
            out.append(math.log(same) - shift)
        elif c == state.other_side:
            out.append(math.log(alternate) + shift)
        else:
            out.append(math.log(other / others) if other > 0 and others > 0 else -math.inf)
    out.append(math.log(new))
    return out


def _learn(character: Character, line: SpokenLine, names: tuple[str, ...]) -> Character:
    registers = list(character.registers)
    if line.register is not None:
        registers[_REGISTERS.index(line.register)] += 1
    pronouns = dict(character.pronouns)
    if line.pronoun is not None:
        pronouns[line.pronoun] = pronouns.get(line.pronoun, 0) + 1
    endings = dict(character.endings)
    if line.ending is not None:
        endings[line.ending] = endings.get(line.ending, 0) + 1
    looks = character.looks
    if coloured(line.signature):
        looks = (*looks[-(_LOOKS_KEPT - 1) :], line.signature)
    return Character(
        looks=looks,
        registers=tuple(registers),
        endings=tuple(sorted(endings.items())),
        pronouns=tuple(sorted(pronouns.items())),
        names=character.names.union(names),
    )


def extend(state: TurnState, line: SpokenLine, c: int, score: float) -> TurnState:
    """``state`` with ``line`` said by character ``c`` (``len(characters)``: a new one) at log-probability
    ``score``."""
    characters = list(state.characters)
    if c == len(characters):
        characters.append(Character())
    pending = state.pending_names
    names: tuple[str, ...] = ()
    if pending is not None and pending[0] != c:
        names, pending = pending[1], None
    characters[c] = _learn(characters[c], line, names)
    if line.calls:
        pending = (c, line.calls)
    other_side = state.other_side if c == state.previous else state.previous
    return TurnState(
        characters=tuple(characters),
        previous=c,
        other_side=other_side,
        last=line,
        pending_names=pending,
        score=score,
        labels=(*state.labels, c),
    )


def step(cues: TurnCues, beam: list[TurnState], line: SpokenLine) -> list[TurnState]:
    """Every hypothesis of ``beam`` extended by each speaker ``line`` may have; the ``cues.beam`` best kept."""
    grown: list[tuple[float, int, int]] = []
    for b, state in enumerate(beam):
        everyone = _Everyone.of(state)
        for c, prior in enumerate(_priors(cues, state, line)):
            if prior == -math.inf:
                continue
            known = c < len(state.characters)
            evidence = _evidence(cues, state.characters[c], everyone, line) if known else 0.0
            grown.append((state.score + prior + evidence, b, c))
    grown.sort(key=lambda g: -g[0])
    return [extend(beam[b], line, c, score) for score, b, c in grown[: max(1, cues.beam)]]


def beam_labels(beam: list[TurnState]) -> tuple[int, ...]:
    """The characters of the lines since the last commit, in the best hypothesis."""
    return max(beam, key=lambda s: s.score).labels


def commit(beam: list[TurnState]) -> TurnState:
    """The best hypothesis, its labels handed out and cleared, as the one state to go on from."""
    return replace(max(beam, key=lambda s: s.score), labels=())
