"""GPU co-residency: memory plan, vLLM log doctor, NVML probe, release protocol and the stack launcher."""
