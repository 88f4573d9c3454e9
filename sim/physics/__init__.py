"""The physics layer: presets of GPUs and models, and what one operation, one step and one request's memory cost on
the roofline. It imports nothing else of the simulator."""
