"""IEEE-754 bit patterns of float64 values as int64, for maxima that vectorise.

Without fast-math LLVM does not vectorise a floating-point maximum (its NaN ordering), but it does vectorise an
integer one, and for numbers ``>= +0`` the bit pattern read as an int64 orders exactly as the number does, with
``+inf`` at :data:`INF_BITS` and every NaN above it.  So ``max|v|`` over a loop is an integer maximum of
``bits(v) & ABS_BITS``: exact, and the test for a value that is not finite in the same pass (the maximum is
``>= INF_BITS``).  Used by the compiled kernels of :mod:`solvers.conservation`, :mod:`solvers.hamilton_jacobi` and
:mod:`solvers.charts`.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

#: Clears the sign bit of an IEEE double read as int64.
ABS_BITS = 0x7FFF_FFFF_FFFF_FFFF
#: Bit pattern of +inf: |v| is finite exactly when its pattern is below this.
INF_BITS = 0x7FF0_0000_0000_0000


@intrinsic
def bits(typingctx, x):
    """The bits of a float64 as an int64 (a register move)."""
    if not isinstance(x, types.Float) or x.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def from_bits(typingctx, x):
    """The float64 whose bits are the int64 ``x``."""
    if x != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen
