"""The timeline: when each shot and line happens (timing), and the subtitles written from it."""
