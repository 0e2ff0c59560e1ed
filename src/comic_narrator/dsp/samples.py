"""The sample type every DSP function takes and returns."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatAudio = npt.NDArray[np.float32]
"""Mono float32 samples in [-1, 1]."""
