"""The voice room: the script written from a reading, casting, delivery, text normalisation, the voice bank and
synthesis of every line."""
