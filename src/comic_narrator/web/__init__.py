"""The browser side of a run: the read-along export (guided navigation + a static player) and the review server."""
