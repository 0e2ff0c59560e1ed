"""What a run imports before its first page: scipy (about a second of every start, most of it scipy.signal
pulling in scipy.stats) is imported by the functions that filter and resample sound, so a run's start, and with
an LLM reading its first request, does not wait on it. Checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys


def _imported_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(done.stdout.split())


def test_the_pipeline_cli_and_book_audio_import_no_scipy() -> None:
    # book_audio and mix are imported as a run starts (pyloudnorm, which mix uses, imports scipy.signal)
    statement = "import comic_narrator.cli.app, comic_narrator.pipeline, comic_narrator.flow.book_audio"
    assert _imported_after(statement) == set()


def test_scipy_arrives_with_the_first_filter() -> None:
    statement = (
        "import numpy as np\n"
        "from comic_narrator.audio.truepeak import limit_peaks\n"
        "limit_peaks(np.random.default_rng(0).uniform(-1, 1, 4800).astype(np.float32), 48000)"
    )
    assert {"scipy.ndimage", "scipy.signal"} <= _imported_after(statement)
