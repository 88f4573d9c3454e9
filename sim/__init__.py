"""inferlab's simulator: LLM inference cost on a roofline, standard library only.

Runs unchanged in CPython (site build, tests) and in Pyodide (the browser).
Units are SI throughout: bytes, FLOPs, seconds; a multiply-add is 2 FLOPs.

Arranged in layers, each a package that imports only from its own layer and the layers below it; packages on one
line below are independent of each other (tests/sim/test_layers.py checks both, and that no import circle exists):
- physics/ | page/: the hardware and model presets and what an operation, a step and a request's memory cost |
  what a page needs of text and figures (numbers as text, escaping, SVG, the site's languages);
- serving/ | techniques/: many requests on a GPU (traces, batching, the scheduler, where the KV cache lives, latency
  targets) | what changes a step's cost (speculative decoding, quantization, attention variants, sampling);
- kit/ | questions/: the widget kit | each lesson's predict-box questions, a module per lesson;
- widgets/: one module per widget, on top of everything.
"""
