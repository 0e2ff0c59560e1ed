"""Outputs made from a finished run for other players: the M4B audiobook."""
