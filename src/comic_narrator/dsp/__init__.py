"""Signal processing on speech samples (pitch, tempo, timbre, breath, pitch tracking): depends on nothing of ours."""
