"""HBM bytes of one (batch, head) by the counting rules of docs/model.md, written out again here
(never read from flashlab): no mask, every tile visited, e the input's element size, statistics
(l, m, L) in fp32."""
import math


def ceil_div(a, b):
    return -(-a // b)


def v1_read(N_q, N_k, d, B_r, B_c, e):
    """FA1 Alg. 1: K_j, V_j once (line 6); Q_i, O_i, l_i, m_i for every (i, j) (line 8)."""
    T_c = ceil_div(N_k, B_c)
    return 2 * N_k * d * e + T_c * (2 * N_q * d * e + 2 * N_q * 4)


def v1_write(N_q, N_k, d, B_r, B_c, e):
    """FA1 Alg. 1: O, l, m initialised (line 2), then O_i, l_i, m_i for every (i, j) (lines 12, 13)."""
    T_c = ceil_div(N_k, B_c)
    return (T_c + 1) * (N_q * d * e + 2 * N_q * 4)


def v1_o_l_m_reads(N_q, N_k, d, B_c, e):
    """The re-reads V2 does not make: O_i, l_i, m_i at every (i, j)."""
    return ceil_div(N_k, B_c) * (N_q * d * e + 2 * N_q * 4)


def v2_read(N_q, N_k, d, B_r, B_c, e):
    """FA2 Alg. 1: Q_i once (line 4), K_j and V_j once per Q block (line 6)."""
    return N_q * d * e + ceil_div(N_q, B_r) * 2 * N_k * d * e


def v2_write(N_q, N_k, d, B_r, B_c, e):
    """FA2 Alg. 1: O_i (line 14) and L_i (line 15) once."""
    return N_q * d * e + N_q * 4


def auto_blocks(M_bytes, d, e):
    """FA1 Alg. 1 line 1 with M in elements: B_c = ceil(M / 4d), B_r = min(B_c, d)."""
    B_c = ceil_div(M_bytes // e, 4 * d)
    return min(B_c, d), B_c


def human_bytes(n):
    """Bytes as flashlab's tables print them: B below 1 KiB, else KiB/MiB/GiB with two decimals."""
    if n < 1024:
        return "%d B" % n
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale:
            return "%.2f %s" % (n / scale, unit)


def unit_roundoff(dtype):
    return {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24}[dtype]


def largest_square_tile(M, d, e):
    """The largest B with V1's SRAM tiles (B d + 2 B d + B^2) e <= M (Q_i; K_j, V_j; S_ij)."""
    B = int((-3 * d + math.sqrt(9 * d * d + 4 * M / e)) / 2)
    while (3 * (B + 1) * d + (B + 1) ** 2) * e <= M:
        B += 1
    while (3 * B * d + B * B) * e > M:
        B -= 1
    return B
