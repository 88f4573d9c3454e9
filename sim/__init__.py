"""inferlab's simulator: LLM inference cost on a roofline, standard library only.

Runs unchanged in CPython (site build, tests) and in Pyodide (the browser).
Units are SI throughout: bytes, FLOPs, seconds; a multiply-add is 2 FLOPs.
"""
