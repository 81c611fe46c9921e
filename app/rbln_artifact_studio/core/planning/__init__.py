"""Planning what runs where: co-location on shared NPUs and the vLLM serving check."""
