"""comic-narrator: a comic or manga in, a narrated, voice-acted, camera-animated MP4 out."""

__version__ = "0.1.0"
