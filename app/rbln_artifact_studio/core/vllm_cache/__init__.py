"""vllm-rbln's compiled-model cache: its key, the `vllm serve` flags that feed it, each entry's status, prune plans."""
