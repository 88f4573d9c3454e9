"""The techniques layer: what changes inference's cost (speculative decoding, quantization, attention variants,
sampling), built on the physics layer alone: none of it needs the serving layer's scheduler, so the two stay apart."""
