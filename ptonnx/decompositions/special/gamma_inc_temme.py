"""Temme's uniform asymptotic expansion of the regularized incomplete gamma functions
(DLMF 8.12), used for a >= 20 and |x - a| < 0.4 a, where the series and the continued fraction
converge slowly (their terms fall off like exp(-n**2 / 2a)).

With t = (x - a)/a, phi = t - log(1 + t) (= -log1pmx(t)) and eta = sign(t) sqrt(2 phi):
Q = erfc(eta sqrt(a/2))/2 + S, P = erfc(-eta sqrt(a/2))/2 - S,
S = exp(-a phi) / sqrt(2 pi a) sum_k c_k(eta) a**-k. The smaller of P and Q is
exp(-a phi) (erfcx(z)/2 -+ sum / sqrt(2 pi a)) with z = sqrt(a phi): exp(-a phi) is computed
from a phi (relatively accurate: t is, and log1pmx is), not as erfc of a rounded
eta sqrt(a/2), whose rounding would cost 2 a phi ulp (up to 1500). The Maclaurin
coefficients d[k][n] of c_k(eta) are computed exactly in references/gamma_inc_constants.py; the
rows and columns kept are those above 1e-19 for |eta| <= 0.48 (|t| <= 0.4) and a >= 20.
The double sum is evaluated as (eta**n)_n @ d . (a**-k)_k (a MatMul and a ReduceSum over an
added last axis: about ten nodes where a Horner scheme per row took ~330).
"""

from __future__ import annotations

import math

import numpy as np

from ptonnx.decompositions.expr import Ex, exp, sqrt, where
from ptonnx.decompositions.special.erf import erfcx

#: Temme's expansion from this a on, for |x - a| < TEMME_WIDTH a
TEMME_FROM = 20.0
TEMME_WIDTH = 0.4
#: d[k][n]: c_k(eta) = sum_n d[k][n] eta**n (references/gamma_inc_constants.py temme_table, truncated per row)
TEMME = (
    (
        -0.3333333333333333, 0.08333333333333333, -0.014814814814814815, 0.0011574074074074073,
        0.0003527336860670194, -0.0001787551440329218, 3.919263178522438e-05, -2.185448510679992e-06,
        -1.85406221071516e-06, 8.296711340953087e-07, -1.7665952736826078e-07, 6.707853543401498e-09,
        1.0261809784240309e-08, -4.382036018453353e-09, 9.14769958223679e-10, -2.5514193994946248e-11,
        -5.830772132550426e-11, 2.4361948020667415e-11, -5.0276692801141755e-12, 1.1004392031956135e-13,
        3.371763262400985e-13,
    ),
    (
        -0.001851851851851852, -0.003472222222222222, 0.0026455026455026454, -0.0009902263374485596,
        0.00020576131687242798, -4.018775720164609e-07, -1.8098550334489977e-05, 7.64916091608111e-06,
        -1.6120900894563446e-06, 4.647127802807434e-09, 1.378633446915721e-07, -5.752545603517705e-08,
        1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09, 4.162792991842583e-10,
        -8.56390702649298e-11, 6.067215101604758e-14, 7.1624989648114856e-12, -2.933186643771437e-12,
    ),
    (
        0.004133597883597883, -0.0026813271604938273, 0.0007716049382716049, 2.0093878600823047e-06,
        -0.0001073665322636516, 5.2923448829120125e-05, -1.2760635188618728e-05, 3.423578734096138e-08,
        1.3721957309062934e-06, -6.298992138380055e-07, 1.4280614206064242e-07, -2.0477098421990866e-10,
        -1.409252991086752e-08, 6.228974084922022e-09, -1.3670488396617114e-09, 9.428356159014678e-13,
        1.2872252400089318e-10, -5.5645956134363323e-11,
    ),
    (
        0.0006494341563786008, 0.00022947209362139917, -0.0004691894943952557, 0.00026772063206283885,
        -7.561801671883977e-05, -2.396505113867297e-07, 1.1082654115347302e-05, -5.6749528269915965e-06,
        1.4230900732435883e-06, -2.7861080291528143e-11, -1.6958404091930278e-07, 8.099464905388083e-08,
        -1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09, -9.460496661855133e-10,
        2.1541049775774907e-10,
    ),
    (
        -0.0008618882909167117, 0.0007840392217200666, -0.0002990724803031902, -1.4638452578843418e-06,
        6.641498215465122e-05, -3.968365047179435e-05, 1.1375726970678419e-05, 2.507497226237533e-10,
        -1.6954149536558305e-06, 8.907507532205309e-07, -2.292934834000805e-07, 2.956794137544049e-11,
        2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09,
    ),
    (
        -0.00033679855336635813, -6.972813758365857e-05, 0.0002772753244959392, -0.00019932570516188847,
        6.797780477937208e-05, 1.419062920643967e-07, -1.3594048189768693e-05, 8.018470256334202e-06,
        -2.291481176508095e-06, -3.252473551298454e-10, 3.4652846491085265e-07, -1.8447187191171344e-07,
        4.8240967037894184e-08,
    ),
    (
        0.0005313079364639922, -0.0005921664373536939, 0.0002708782096718045, 7.902353232660328e-07,
        -8.153969367561969e-05, 5.61168275310625e-05, -1.8329116582843375e-05, -3.0796134506033047e-09,
        3.465155368803609e-06, -2.0291327396058603e-06, 5.788792863149004e-07, 2.338630673826657e-13,
        -8.828600746330484e-08,
    ),
    (
        0.00034436760689237765, 5.171790908260592e-05, -0.00033493161081142234, 0.0002812695154763237,
        -0.00010976582244684731, -1.2741009095484485e-07, 2.7744451511563645e-05, -1.8263488805711332e-05,
        5.7876949497350525e-06, 4.93875893393627e-10, -1.0595367014026043e-06, 6.166714376110408e-07,
    ),
    (
        -0.0006526239185953094, 0.0008394987206720873, -0.000438297098541721, -6.969091458420552e-07,
        0.00016644846642067547, -0.00012783517679769218, 4.629953263691304e-05, 4.557909867922708e-09,
        -1.0595271125805195e-05, 6.783342904865167e-06,
    ),
    (
        -0.0005967612901927463, -7.204895416020011e-05, 0.0006782308837667328, -0.0006401475260262758,
        0.00027750107634328704, 1.819700838046515e-07, -8.479507117068503e-05, 6.105192082501531e-05,
        -2.1073920183404862e-05,
    ),
    (
        0.0013324454494800656, -0.0019144384985654776, 0.0011089369134596636, 9.9324041226423e-07,
        -0.0005087450129309319, 0.00042735056665392886, -0.00016858853767910798,
    ),
    (
        0.001579727660730835, 0.00016251626278391583, -0.0020633421035543276, 0.00213896861856891,
        -0.0010108559391263003,
    ),
    (-0.004072512119514016, 0.00640336283380807, -0.004041016108167662,),
)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
#: TEMME as a 32 x 16 matrix (`_powers` gives 32 powers of eta and 16 of 1/a): [n, k] = d[k][n], else 0
TEMME_MATRIX = np.array([[row[n] if n < len(row) else 0.0 for row in TEMME + ((),) * 3] for n in range(32)])


def _powers(v: Ex, count: int) -> Ex:
    """(v**0, ..., v**(m - 1)) along a new last axis, m the power of two >= count: [1, v] (Pow, exact),
    then doubled by multiplying by v**2, v**4, ... (products: 2**k - 1 roundings in v**(2**k), on terms
    below 1e-10 from v**16 on; Pow of every exponent costs ten times as much in onnxruntime)."""
    axis = v.value.type.ndim
    square = v.op("Unsqueeze", axes=(axis,))
    powers = square.op("Pow", Ex(v.scope, v.scope.constant(np.array([0.0, 1.0], dtype=v.dtype))))
    while powers.value.type.shape[-1] < count:
        square = square * square
        powers = powers.op("Concat", powers * square, axis=axis)
    return powers


def temme_smaller(a: Ex, t: Ex, phi: Ex, a_phi: Ex) -> Ex:
    """min(P, Q): Q where t >= 0, P where t < 0 (phi = t - log1p(t), a_phi = a phi)."""
    return exp(-a_phi) * temme_bracket(a, t, phi, a_phi)


def temme_bracket(a: Ex, t: Ex, phi: Ex, a_phi: Ex) -> Ex:
    """min(P, Q) exp(a phi): the smaller tail's log is its log minus a phi, past its underflow."""
    eta = sqrt(phi * 2.0)
    eta = where(t < 0.0, -eta, eta)
    # sum_k c_k(eta) a**-k as (eta**n)_n @ TEMME_MATRIX . (a**-k)_k: a few tensor nodes, not one Mul and Add per coefficient
    rows = _powers(eta, len(TEMME[0])).op("MatMul", Ex(a.scope, a.scope.constant(TEMME_MATRIX.astype(a.dtype))))
    terms = rows * _powers(1.0 / a, len(TEMME))
    total = terms.op("ReduceSum", axes=(terms.value.type.ndim - 1,), keepdims=False)
    correction = total * INV_SQRT_2PI / sqrt(a)
    return erfcx(sqrt(a_phi)) * 0.5 + where(t < 0.0, -correction, correction)
