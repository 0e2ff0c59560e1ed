"""Shared fixtures for the gpu tests: real-log paths, free loopback ports, and skipping GPU tests without a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import free_ports

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu"
LOGS = DATA / "logs"
CONFIGS = DATA / "configs"


def _has_cuda_gpu() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
        count = int(pynvml.nvmlDeviceGetCount())
        pynvml.nvmlShutdown()
    except Exception:
        return False
    return count > 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_cuda_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (NVML finds none)")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


def free_port() -> int:
    return free_ports(1)[0]


@pytest.fixture
def port() -> int:
    return free_port()
