"""The spine: pages streaming through the stages, on an executor."""
