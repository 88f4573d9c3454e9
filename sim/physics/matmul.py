"""Cost of one matrix multiplication (rows × inner) · (inner × cols) under the roofline's bookkeeping.

Conventions (the same as sim/physics/roofline.py): a multiply-add is 2 FLOPs, so the product costs
2 · rows · inner · cols FLOPs; the bytes are one read of each operand and one write of the result,
each element `bytes_per_element` wide (BF16 = 2): bytes = b · (rows·inner + inner·cols + rows·cols).
Caches, tiling and re-reads are ignored: this is the least traffic the product can have.

With b = 2 the factors of two cancel and the arithmetic intensity is exactly
1 / (1/rows + 1/inner + 1/cols): about `rows` while rows ≪ inner, cols (GEMM in prefill, rows = T)
and about 1 for a single row (GEMV in decode).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.physics.validate import check_int

MAX_DIMENSION = 10**9  # far beyond any model's matrix edge; anything larger is a mistake, not a model
MAX_BYTES_PER_ELEMENT = 8


@dataclass(frozen=True)
class MatmulCost:
    """FLOPs and bytes of (rows × inner) · (inner × cols) = (rows × cols)."""

    rows: int
    inner: int
    cols: int
    bytes_per_element: int
    flops: int
    input_bytes: int  # the (rows × inner) left operand, read once
    weight_bytes: int  # the (inner × cols) right operand, read once
    output_bytes: int  # the (rows × cols) result, written once

    @property
    def bytes(self) -> int:
        return self.input_bytes + self.weight_bytes + self.output_bytes

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte moved."""
        return self.flops / self.bytes


def matmul_cost(rows: int, inner: int, cols: int, bytes_per_element: int = 2) -> MatmulCost:
    """The cost record of (rows × inner) · (inner × cols); ValueError names a bad argument."""
    rows = check_int("rows", rows, 1, MAX_DIMENSION)
    inner = check_int("inner", inner, 1, MAX_DIMENSION)
    cols = check_int("cols", cols, 1, MAX_DIMENSION)
    b = check_int("bytes_per_element", bytes_per_element, 1, MAX_BYTES_PER_ELEMENT)
    return MatmulCost(
        rows=rows,
        inner=inner,
        cols=cols,
        bytes_per_element=b,
        flops=2 * rows * inner * cols,
        input_bytes=b * rows * inner,
        weight_bytes=b * inner * cols,
        output_bytes=b * rows * cols,
    )
