"""`comic-narrator voices`: list the voice bank (--json) or preview one voice into a WAV file."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from comic_narrator.backends.protocols import Delivery
from comic_narrator.cli.options import add_tts_reference_option, url_list_arg
from comic_narrator.config import VoiceConfig
from comic_narrator.errors import ComicNarratorError, OutputError
from comic_narrator.voice.normalize import normalize_for_speech
from comic_narrator.voice.synthesis import write_wav_atomic
from comic_narrator.voice.voicebank import open_voice_bank
from comic_narrator.workdir import ensure_writable_output


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="comic-narrator voices", description="List the available voices, or preview one into a WAV file."
    )
    parser.add_argument("--json", action="store_true", help="print the voice list as JSON")
    parser.add_argument("--preview", metavar="VOICE", help="voice id to preview")
    parser.add_argument("text", nargs="?", help="text to speak with --preview")
    parser.add_argument("-o", "--output", type=Path, help="WAV file written by --preview")
    parser.add_argument("--speed", type=float, default=1.0, help="speaking-rate multiplier for --preview")
    parser.add_argument("--pitch", type=float, default=0.0, help="pitch shift in semitones for --preview")
    parser.add_argument(
        "--tts-server",
        type=url_list_arg,
        metavar="URL[,URL...]",
        help="also list/preview a GPU TTS server's voices (base URL; several of one engine: --register registers "
        "the voice on each)",
    )
    parser.add_argument("--tts-api", choices=("fish", "openai"), default="fish", help="the server's API")
    parser.add_argument("--tts-voices", help="comma-separated server voices, name[:lang[:gender[:age]]]")
    add_tts_reference_option(parser)
    parser.add_argument("--register", metavar="ID", help="register a Fish Speech reference voice under this id")
    parser.add_argument("--reference", type=Path, help="with --register: a short WAV of the voice")
    parser.add_argument("--transcript", help="with --register: what the reference WAV says")
    return parser


def _config(args: argparse.Namespace) -> VoiceConfig:
    voices = tuple(v.strip() for v in (args.tts_voices or "").split(",") if v.strip())
    return VoiceConfig(
        tts_server=args.tts_server,
        tts_server_api=args.tts_api,
        tts_server_voices=voices,
        tts_server_references=tuple(args.tts_reference),
    )


def _register(config: VoiceConfig, reference_id: str, reference: Path, transcript: str) -> int:
    """Upload a reference voice to a Fish Speech server (POST /v1/references/add)."""
    from comic_narrator.backends.fish_speech import FishSpeechEngine, ReferenceAudio

    if not config.tts_server or config.tts_server_api != "fish":
        raise OutputError("--register needs --tts-server URL of a Fish Speech server")
    try:
        wav_bytes = reference.read_bytes()
    except OSError as exc:
        raise OutputError(f"cannot read the reference: {exc.strerror or exc}", path=reference) from exc
    engine = FishSpeechEngine(config.tts_server, timeout_s=config.tts_request_timeout_s)
    engine.add_reference(reference_id, ReferenceAudio(wav_bytes, transcript))
    print(f"registered fish:{reference_id}; the server now lists: {', '.join(engine.list_references())}")
    return 0


def _list(config: VoiceConfig, as_json: bool) -> int:
    with open_voice_bank(config) as bank:
        voices = bank.voices()
        if as_json:
            print(json.dumps([asdict(v) for v in voices], indent=2, ensure_ascii=False))
            return 0
        print(f"{'voice':<18} {'lang':<4} {'gender':<7} {'age':<6} {'engine':<10} {'tier':<8} {'from':<12} description")
        for v in voices:
            star = " (narrator)" if v.narrator else ""
            origin = v.derived_from or "-"
            print(
                f"{v.id:<18} {v.language:<4} {v.gender:<7} {v.age:<6} {v.engine:<10} {v.tier:<8} {origin:<12} "
                f"{v.description}{star}"
            )
        print(
            "tier: fast = within the one-core real-time budget, cast by default; natural = neural voices, "
            "cast with --voice-quality natural (or pin them with --narrator-voice / --cast). "
            "from: the voice a derived voice is made from (- = a model's own recorded speaker)"
        )
    return 0


def _preview(config: VoiceConfig, voice_id: str, text: str, output: Path, speed: float, pitch: float) -> int:
    ensure_writable_output(output)
    with open_voice_bank(config) as bank:
        info = bank.voice(voice_id)
        spoken = normalize_for_speech(text, info.language, "speech")
        if not spoken:
            raise OutputError("nothing to say: the text has no speakable words")
        speech = bank.synthesize(spoken, voice_id, Delivery(speed=speed, pitch_semitones=pitch))
    write_wav_atomic(output, speech)
    print(f"{output}: {speech.duration_s:.2f} s at {speech.sample_rate_hz} Hz ({voice_id})")
    return 0


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        config = _config(args)
        if args.register:
            if not args.reference or not args.transcript:
                parser.error("--register ID needs --reference FILE.wav and --transcript TEXT")
            return _register(config, args.register, args.reference, args.transcript)
        if args.preview:
            if not args.text or not args.output:
                parser.error('--preview needs VOICE "text" -o FILE.wav')
            return _preview(config, args.preview, args.text, args.output, args.speed, args.pitch)
        if args.text or args.output:
            parser.error('text and -o go with --preview VOICE "text" -o FILE.wav')
        return _list(config, args.json)
    except ComicNarratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
