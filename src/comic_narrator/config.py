"""Frozen configuration objects, one per concern; every field typed, defaulted and documented."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from comic_narrator.artifacts import Lang, Layout


def split_urls(spec: str) -> tuple[str, ...]:
    """``URL[,URL...]`` -> the URLs, stripped of blanks and of a trailing slash, empty items dropped."""
    return tuple(url.strip().rstrip("/") for url in spec.split(",") if url.strip())


@dataclass(frozen=True)
class IngestConfig:
    pdf_dpi: int | None = None
    """Resolution at which PDF pages are rendered; None = auto (the page's long side comes out near 2000 px,
    enough for OCR of small lettering, whatever size the PDF's pages declare)."""
    pages: str | None = None
    """Page selection such as '3-7' or '1,3,5-6' (1-based, inclusive); None = all pages."""
    max_image_pixels: int = 64_000_000
    """Largest decoded image accepted (admits a 1,000 x 40,000 px webtoon strip and 8K pages)."""
    max_archive_bytes: int = 2 * 1024**3
    """Cap on the total decompressed size of an archive (zip-bomb guard)."""
    max_compression_ratio: float = 200.0
    """An archive entry that inflates more than this many times its compressed size is refused."""
    webtoon_aspect: float = 2.5
    """Pages with height/width at or above this are sliced at gutters into segments."""
    layout: Layout = "auto"
    """Reading layout; 'webtoon' slices every page."""
    keep_going: bool = False
    """A page whose image cannot be decoded becomes a blank page marked unreadable (the run records it and goes
    on) instead of failing the run. Not part of the ingest's cache key: the mark travels with the page."""


@dataclass(frozen=True)
class VisionConfig:
    vision: Literal["local", "llm"] = "local"
    """'local' (OpenCV panels + rapidocr) or 'llm' (local geometry and OCR, then a multimodal LLM served by vLLM
    corrects the text and names speakers, their gender/age and each line's emotion)."""
    layout: Layout = "auto"
    """Reading direction source: auto (ComicInfo / language / shape), manga (rtl), western (ltr), webtoon (ttb)."""
    lang: Lang = "auto"
    """Book language; auto detects it from the OCR'd script (kana/kanji -> ja)."""
    min_ocr_score: float = 0.5
    """rapidocr lines below this recognition score are dropped."""
    panels: Literal["auto", "model", "classical"] = "auto"
    """Panel finder (enters the reading cache key): 'model' is the shipped U-Net segmenter on page-shaped pages
    (strips and webtoon slices still go to the classical detector); 'classical' is the OpenCV detector alone;
    'auto' is the model on black-and-white pages and the classical detector on colour pages, where it measured
    as well or better."""


Granularity = Literal["page", "panel"]


@dataclass(frozen=True)
class LlmConfig:
    base_url: str = "http://127.0.0.1:8000/v1"
    """OpenAI-compatible server (vLLM's `/v1/chat/completions`) for `--vision llm`: one base URL, or several
    separated by commas that serve the same model (each request goes to the one with the fewest in flight)."""
    model: str | None = None
    """Model name sent in requests; None = the first model the server lists at /v1/models."""
    api_key_env: str = "COMIC_NARRATOR_LLM_API_KEY"
    """Environment variable holding a bearer token, if the server needs one (never stored in artifacts)."""
    timeout_s: float = 180.0
    """Per-request timeout; a page of a multimodal model can take tens of seconds on a busy GPU."""
    concurrency: int = 4
    """Pages in flight at once per server (vLLM batches concurrent requests)."""
    max_image_side_px: int = 1536
    """Pages are downscaled so their long side is at most this before they are sent."""
    max_tokens: int = 2048
    """Cap on the structured answer per page."""
    disable_thinking: bool = True
    """Send chat_template_kwargs enable_thinking=false: reasoning models otherwise return empty content."""
    granularity: Granularity = "page"
    """What one request shows: the whole page, or one panel's crop and its lettering (more, smaller requests, for
    models with small image budgets). Enters the LLM reading's cache key."""

    @property
    def base_urls(self) -> tuple[str, ...]:
        """The servers of ``base_url``, in the order given."""
        return split_urls(self.base_url)

    @property
    def slots(self) -> int:
        """Pages in flight at once across all the servers: the size of a pool that keeps each of them busy."""
        return max(1, self.concurrency) * max(1, len(self.base_urls))


@dataclass(frozen=True)
class VoiceConfig:
    narrator_voice: str | None = None
    """Voice id for the narrator; None picks the language's default narrator voice."""
    cast_file: Path | None = None
    """YAML file pinning characters to voices, speeds and pitches."""
    speed: float = 1.0
    """Global speaking-rate multiplier."""
    jobs: int = 0
    """Parallel synthesis workers; 0 = one per CPU core."""
    quality: Literal["fast", "natural"] = "natural"
    """Which bundled voices casting uses: "natural" (the default: adds Kokoro's neural voices and prefers them,
    Kokoro's recorded English and Japanese speakers, about 0.4 CPU s per audio s, 5x joe; a whole run still fits
    0.5x the video's length on 2 cores) or "fast" (every voice within the one-core real-time budget: joe and its
    variants for English, Open JTalk Mei and hers for Japanese).
    Voices pinned by --narrator-voice or a cast file are used whatever the setting."""
    read_captions: bool = True
    """Captions are read by the narrator."""
    read_sound_effects: bool = False
    """Sound effects are spoken (by the narrator) rather than left silent."""
    tts_server: str | None = None
    """Base URL of a GPU TTS server (e.g. http://127.0.0.1:8080), or several of one engine separated by commas
    (the same voices on each; each line goes to the one with the fewest in flight); None = only the bundled
    offline voices."""
    tts_server_api: Literal["fish", "openai"] = "fish"
    """The server's API: Fish Speech (/v1/tts, /v1/references/*) or OpenAI-compatible /v1/audio/speech."""
    tts_server_voices: tuple[str, ...] = ()
    """Server voices offered for casting: Fish reference ids or OpenAI voice names; () = what the server lists."""
    tts_server_references: tuple[tuple[str, Path], ...] = ()
    """Fish Speech voices by example: (voice spec, WAV) pairs sent inline with every request (no registration on
    the server). The spec is ``name[:en|ja[:gender[:age]]]``; the WAV's transcript is the .txt file beside it."""
    tts_server_model: str = "tts-1"
    """The `model` field sent to an OpenAI-compatible speech server."""
    tts_server_concurrency: int | None = None
    """Most requests in flight to each TTS server at once; None: 8 for the OpenAI speech API (the project's GPU
    voices beside vLLM: with 4, its slots were full in about 40 % of its busy time, and a book kept it 0.4-3.4 s
    busier; docs/gpu.md) and 4 for Fish Speech, as before (its server queues what it cannot voice at once, and a
    queued request's wait counts against the timeout)."""
    tts_request_timeout_s: float = 120.0
    """Per-request timeout for the TTS server."""

    @property
    def tts_in_flight(self) -> int:
        """``tts_server_concurrency``, or the API's own bound."""
        if self.tts_server_concurrency is not None:
            return max(1, self.tts_server_concurrency)
        return 8 if self.tts_server_api == "openai" else 4


@dataclass(frozen=True)
class AudioConfig:
    sample_rate_hz: int = 48_000
    """Sample rate of the mixed track and the AAC stream; 48 kHz divides evenly by 24, 25, 30 and 60 fps, so
    every shot is a whole number of samples as well as of frames."""
    target_lufs: float = -16.0
    """Integrated loudness of the final mix (EBU R128, the usual target for spoken content)."""
    sound_bed: bool = True
    """Add the bed: each page's ambience under its pauses, synthesised effects for lettered sound words, a swish
    at page turns (docs/sound.md)."""
    effects_peak_dbfs: float = -12.0
    """Peak level of a sound-word effect (the voices sit at the loudness target above it)."""
    page_turn_peak_dbfs: float = -24.0
    """Peak level of the page-turn swish."""
    ambience_under_voice_lu: float = 18.0
    """How far under the voices' loudness a page's ambience plays in its pauses (wind, rain, ...)."""
    neutral_under_voice_lu: float = 24.0
    """The same for the neutral bed of a page nothing places: soft air, enough that no pause is dead."""
    duck_db: float = 10.0
    """How far the ambience and music dip under speech."""
    duck_attack_s: float = 0.3
    """The dip starts this long before a line, so it is down when the voice starts."""
    duck_release_s: float = 0.8
    """The bed comes back over this long after a line."""
    music: bool = False
    """A music bed in a mood chosen from each page (synthesised chords), under the ambience."""
    music_under_voice_lu: float = 22.0
    """How far under the voices' loudness the music plays in pauses."""
    sounds_dir: Path | None = None
    """A folder whose sounds.toml maps recordings over the synthesised sounds (docs/sound.md)."""
    page_hold_s: float = 1.5
    """Length of each page's establishing shot when nothing is said over it."""
    empty_panel_hold_s: float = 1.2
    """How long a panel without text stays on screen."""
    panel_lead_in_s: float = 0.25
    """Silence at the start of each panel shot before its first line."""
    panel_tail_s: float = 0.35
    """Silence at the end of each panel shot after its last line."""


Aspect = Literal["wide", "vertical", "square"]

ASPECT_SIZE_PX: dict[Aspect, tuple[int, int]] = {
    "wide": (1920, 1080),
    "vertical": (1080, 1920),
    "square": (1080, 1080),
}
"""The frame (width, height) of each ``--aspect``: 16:9 for players, 9:16 for phone shorts, 1:1 for feeds."""

DRAFT_FPS = 12
"""A draft's frame rate: half the default's frames to warp and encode; 48 kHz audio still divides evenly."""

DRAFT_CRF = 28
"""A draft's libx264 quality: softer than the default 20, and a third of its bits at the draft size."""

DRAFT_SHORT_SIDE_PX = 480
"""A draft's short side at most; both sides keep the exact aspect and are multiples of 4 (the I420 frame layout
needs it), so a draft frames exactly what the full render does: 832 x 468 wide, 468 x 832 vertical, 480 square."""


@dataclass(frozen=True)
class RenderConfig:
    """The picture and its encoding. Fields marked *key* enter each video segment's cache key (see
    video/segments.py); the others only decide how the work is done."""

    width_px: int = 1920
    """*key*"""
    height_px: int = 1080
    """*key*"""
    fps: int = 24
    """*key* (through the camera plan). 24, not 30: measured 0.48 against 0.54 CPU s per video s (median of 3,
    benchmarks/render_settings.py), same size and PSNR; the slow push-ins look the same, the 0.6 s glides between
    panels move in steps a quarter larger."""
    crf: int = 20
    """*key* libx264 constant rate factor (lower = better, bigger)."""
    preset: str = "veryfast"
    """*key* libx264 preset."""
    x264_params: str = "me=dia:subme=1:b-adapt=0:partitions=none"
    """*key* added to the preset: a diamond search, the cheapest sub-pixel refinement, fixed B-frames and no
    sub-macroblock partitions suit a slow, smooth camera. Measured on Pepper&Carrot at 1080p24 CRF 20 (median of 3):
    encoding 11.3 ms a frame against 21.4 for plain 'veryfast', files 7 % bigger, luma PSNR 0.1 dB lower.
    Empty when another --preset is chosen."""
    tune: str = "animation"
    """*key* libx264 tune ('' = none). 'animation' (more B-frames, stronger deblocking, lighter psychovisual
    tuning, made for flat drawn areas) measured as fast as none and 5 % smaller at the same PSNR on
    Pepper&Carrot; 'stillimage' no faster and 0.45 dB worse."""
    zoom_amount: float = 0.06
    """How far the Ken Burns move pushes in over one shot (fraction of the view); enters the key through the plan."""
    dim_outside_panel: bool = True
    """*key* Darken the neighbouring panels that the 16:9 view shows around the current one."""
    background_rgb: tuple[int, int, int] = (12, 12, 14)
    """*key* Letterbox colour around page and panel views."""
    segment_s: float = 5.0
    """*key* A page's video is cut into segments at shot ends once a segment holds this long, so two cores share
    even a one-page book and a resumed run loses little; each cut costs one extra keyframe (about 70 kB at 1080p)."""
    jobs: int = 0
    """Processes rendering segments at once (0 = one per core)."""
    burn_subtitles: Literal["", "book", "en"] = ""
    """Draw the subtitles into the picture: '' none, 'book' the book's own language, 'en' the English
    translation where the reading carries one (else the book's own); enters each segment's key as its cues."""
    transition: Literal["slide", "fade", "cut"] = "slide"
    """How a page takes over from the one before: a slide in the reading direction, a cross-fade, or a cut."""
    highlight: bool = True
    """Outline the balloon of the line being spoken, fading in and out with its clip (``--no-highlight``)."""
    end_card: bool = True
    """End the video with a card of the book's title, credits and licence notes (when anything is known)."""
    credits: tuple[str, ...] = ()
    """Lines the user gives for the end card (``--credits``), shown before what the book says."""
    chapters: tuple[int, ...] = ()
    """Input page numbers starting chapters (``--chapters``); empty = the book's own (ComicInfo.xml bookmarks, the
    PDF outline), if any."""
    split_chapters: bool = False
    """Also write one MP4 per chapter, each with its own subtitle files."""

    def draft(self) -> RenderConfig:
        """A fast, low-resolution preview of the same picture (``--draft``): the short side at 480 px or less, 12
        fps, CRF 28; the same camera, dimming and sound, the shots rounded to 12 fps. The encoder's preset and
        tuning are kept: at 832x468 ``ultrafast`` saved 0.8 ms a frame (0.01 CPU s per video second) and wrote
        files 4-5 times bigger (7-8 MB a minute against 1.6-1.8)."""
        divisor = math.gcd(self.width_px, self.height_px)
        unit_w, unit_h = self.width_px // divisor, self.height_px // divisor
        steps = DRAFT_SHORT_SIDE_PX // min(unit_w, unit_h)
        while steps > 1 and (unit_w * steps % 4 or unit_h * steps % 4):
            steps -= 1
        width, height = unit_w * steps, unit_h * steps
        if steps < 1 or width % 4 or height % 4:  # no exact small size: round each side to a multiple of 16
            scale = DRAFT_SHORT_SIDE_PX / min(self.width_px, self.height_px)
            width, height = (max(16, round(side * scale / 16) * 16) for side in (self.width_px, self.height_px))
        return replace(self, width_px=width, height_px=height, fps=DRAFT_FPS, crf=DRAFT_CRF)


@dataclass(frozen=True)
class RunConfig:
    input_path: Path
    output_path: Path
    work_dir: Path
    ingest: IngestConfig = field(default_factory=IngestConfig)
    vision: VisionConfig = field(default_factory=VisionConfig)
    llm: LlmConfig = field(default_factory=LlmConfig)
    voice: VoiceConfig = field(default_factory=VoiceConfig)
    audio: AudioConfig = field(default_factory=AudioConfig)
    render: RenderConfig = field(default_factory=RenderConfig)
    vision_only: bool = False
    """Stop after the reading stages (writes readings to the work folder)."""
    keep_going: bool = False
    """A page that cannot be decoded, read or voiced is recorded and shown silent while the rest go on (the exit
    code still says something failed); without it the first such page stops the run."""
    executor: Literal["local", "ray"] = "local"
    """Where page work runs: in-process pools, or a Ray cluster (reading actors and render tasks)."""
    ray_address: str | None = None
    """The Ray cluster to join (``ray://host:10001`` or ``auto``); None starts a local instance for the run."""
    reading_file: Path | None = None
    """Start from an edited BookReading JSON instead of reading the pages."""
    script_file: Path | None = None
    """Start from an edited Script JSON instead of writing the script from the readings."""
    stack_file: Path | None = None
    """Use the GPU stack that `comic-narrator gpu up STACK.yaml` started: its vLLM reads (--vision llm), its TTS
    server voices; in a time-shared stack vLLM is woken for reading and put to sleep for voicing."""
