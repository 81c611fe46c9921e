"""NPU servers over SSH: transport, remote scan and inspection, device status and detached jobs (no Qt)."""
