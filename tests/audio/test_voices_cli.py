"""`comic-narrator voices`: the list (text and JSON) and a real preview WAV."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import soundfile as sf

from comic_narrator.cli.voices import main
from tests.backends.tts_servers import ServerState, tone_wav, tts_server


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json"]) == 0
    voices = json.loads(capsys.readouterr().out)
    by_id = {v["id"]: v for v in voices}
    english = [v for v in voices if v["language"] == "en"]
    assert len(english) >= 6
    assert {v["gender"] for v in english} >= {"male", "female"}
    assert {v["age"] for v in english} >= {"child", "young", "adult", "old"}
    assert by_id["en-joe"]["narrator"] is True and by_id["en-joe"]["engine"] == "piper"
    assert set(voices[0]) >= {"id", "language", "gender", "age", "engine", "description", "narrator", "nature"}


def test_every_voice_says_what_it_is_made_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json"]) == 0
    voices = json.loads(capsys.readouterr().out)
    by_id = {v["id"]: v for v in voices}
    assert all("derived_from" in v and "grade" in v for v in voices)
    # Every derived voice names a voice that exists; the recorded speakers name none.
    assert all(v["derived_from"] in by_id for v in voices if v["derived_from"] is not None)
    assert by_id["en-joe"]["derived_from"] is None and by_id["en-joe-girl"]["derived_from"] == "en-joe"
    if "en-heart" in by_id:  # the Kokoro packages are installed
        assert by_id["en-heart"]["derived_from"] is None and by_id["en-heart"]["grade"] == "A"
        assert by_id["en-bella-girl"]["derived_from"] == "en-bella" and by_id["en-bella-girl"]["age"] == "child"
        natural_english = [v for v in voices if v["language"] == "en" and v["tier"] == "natural"]
        originals = [v for v in natural_english if v["derived_from"] is None]
        assert len(originals) == 28
        assert sum(v["gender"] == "female" for v in originals) == 15


def test_list_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["voice", "lang", "gender"]
    assert "en-joe " in out and "(narrator)" in out


def test_preview_writes_a_wav(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "joe.wav"
    assert main(["--preview", "en-joe-young", "HEY! Over here!", "-o", str(out)]) == 0
    info = sf.info(str(out))
    assert info.samplerate == 22_050 and 0.5 < info.duration < 3.0
    assert "en-joe-young" in capsys.readouterr().out


def test_preview_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real voice bank and CLI; each failing call must leave nothing at the path it was given."""
    assert main(["--preview", "nobody", "Hi.", "-o", str(tmp_path / "x.wav")]) == 2
    assert "unknown voice 'nobody'" in capsys.readouterr().err
    assert main(["--preview", "en-joe", "...", "-o", str(tmp_path / "x.wav")]) == 2
    assert "nothing to say" in capsys.readouterr().err
    assert not (tmp_path / "x.wav").exists()
    missing = tmp_path / "missing" / "x.wav"
    assert main(["--preview", "en-joe", "Hi.", "-o", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and str(missing.parent) in err
    assert not missing.parent.exists(), "a failed preview must not create the folder it was refused for"
    assert list(tmp_path.iterdir()) == []
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    assert main(["--preview", "en-joe", "Hi.", "-o", str(a_file / "x.wav")]) == 2
    assert f"{a_file} is not a folder" in capsys.readouterr().err  # was an internal error
    assert a_file.read_text() == "keep me"
    with pytest.raises(SystemExit):
        main(["--preview", "en-joe", "Hi."])


def test_server_voices_listed_and_registered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = ServerState()
    reference = tmp_path / "ref.wav"
    reference.write_bytes(tone_wav("a sample line", 190.0))
    with tts_server(state) as url:
        assert (
            main(
                [
                    "--tts-server",
                    url,
                    "--register",
                    "villain",
                    "--reference",
                    str(reference),
                    "--transcript",
                    "a sample line",
                ]
            )
            == 0
        )
        assert "fish:villain" in capsys.readouterr().out
        assert state.references["villain"] == "a sample line"
        assert main(["--json", "--tts-server", url]) == 0
        ids = [v["id"] for v in json.loads(capsys.readouterr().out)]
        assert ids[:2] == ["fish:hero", "fish:villain"] and "en-joe" in ids
        out = tmp_path / "villain.wav"
        assert main(["--tts-server", url, "--preview", "fish:villain", "Mwa ha ha.", "-o", str(out)]) == 0
        assert sf.info(str(out)).samplerate == 16_000
    assert main(["--tts-server", url, "--json"]) == 2
    assert "not answering" in capsys.readouterr().err


def test_register_and_stray_arguments_are_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each misuse exits with a line saying what is missing, before any server is asked."""
    reference = tmp_path / "ref.wav"
    reference.write_bytes(tone_wav("a sample line", 190.0))
    register = ["--register", "villain", "--reference", str(reference), "--transcript", "a sample line"]
    assert main(register) == 2
    assert "--register needs --tts-server URL of a Fish Speech server" in capsys.readouterr().err
    assert main([*register, "--tts-server", "http://127.0.0.1:9/v1", "--tts-api", "openai"]) == 2
    assert "--register needs --tts-server URL of a Fish Speech server" in capsys.readouterr().err
    missing = tmp_path / "absent.wav"
    state = ServerState()
    with tts_server(state) as url:
        code = main(["--tts-server", url, "--register", "v", "--reference", str(missing), "--transcript", "x"])
        assert code == 2
        err = capsys.readouterr().err.strip()
        assert err == f"error: {missing}: cannot read the reference: No such file or directory"
        assert "v" not in state.references
        for argv in (["--tts-server", url, "--register", "v", "--transcript", "x"], ["--register", "v"]):
            with pytest.raises(SystemExit) as exited:
                main(argv)
            assert exited.value.code == 2
            assert "--register ID needs --reference FILE.wav and --transcript TEXT" in capsys.readouterr().err
    for argv in (["Hello there."], ["-o", str(tmp_path / "x.wav")]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        assert "text and -o go with --preview" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [reference]
