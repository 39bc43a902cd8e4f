"""The signatures of torch.special, torch.linalg and torch.fft, as torch's generator writes stubs.

Generated from torch's ``native_functions.yaml`` by ``python scripts/gen_torch_namespaces.py``; do not edit.
``symscalar.torch_stubs`` writes them into the stubs of those modules (``tests/test_torch_stubs.py`` fails
when this file is stale).
"""

# torch module (relative to torch/) -> {function: its signatures (more than one: overloads)}
SIGNATURES: dict[str, dict[str, tuple[str, ...]]] = {
    'special/__init__.py': {
        'entr': (
            'def entr(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'psi': (
            'def psi(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'digamma': (
            'def digamma(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'gammaln': (
            'def gammaln(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'polygamma': (
            'def polygamma(n: _int, input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'erf': (
            'def erf(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'erfc': (
            'def erfc(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'erfcx': (
            'def erfcx(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'erfinv': (
            'def erfinv(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'logit': (
            'def logit(input: Tensor, eps: _float | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'logsumexp': (
            'def logsumexp(input: Tensor, dim: _int | _size, keepdim: _bool=False, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'expit': (
            'def expit(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'exp2': (
            'def exp2(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'expm1': (
            'def expm1(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'xlog1py': (
            'def xlog1py(input: Tensor, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def xlog1py(self: Number | _complex, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def xlog1py(input: Tensor, other: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'xlogy': (
            'def xlogy(input: Tensor, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def xlogy(self: Number | _complex, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def xlogy(input: Tensor, other: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'i0': (
            'def i0(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'i0e': (
            'def i0e(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'i1': (
            'def i1(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'i1e': (
            'def i1e(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ndtr': (
            'def ndtr(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ndtri': (
            'def ndtri(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'log_ndtr': (
            'def log_ndtr(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'log1p': (
            'def log1p(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'sinc': (
            'def sinc(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'round': (
            'def round(input: Tensor, *, decimals: _int=0, out: Tensor | None=None) -> Tensor: ...',
        ),
        'softmax': (
            'def softmax(input: Tensor, dim: _int, dtype: _dtype | None=None) -> Tensor: ...',
        ),
        'log_softmax': (
            'def log_softmax(input: Tensor, dim: _int, *, dtype: _dtype | None=None) -> Tensor: ...',
        ),
        'zeta': (
            'def zeta(input: Tensor, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def zeta(self: Number | _complex, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def zeta(input: Tensor, other: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'multigammaln': (
            'def multigammaln(input: Tensor, p: _int, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'gammainc': (
            'def gammainc(input: Tensor, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'gammaincc': (
            'def gammaincc(input: Tensor, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'airy_ai': (
            'def airy_ai(x: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'bessel_j0': (
            'def bessel_j0(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'bessel_j1': (
            'def bessel_j1(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'bessel_y0': (
            'def bessel_y0(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'bessel_y1': (
            'def bessel_y1(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'chebyshev_polynomial_t': (
            'def chebyshev_polynomial_t(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def chebyshev_polynomial_t(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def chebyshev_polynomial_t(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'chebyshev_polynomial_u': (
            'def chebyshev_polynomial_u(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def chebyshev_polynomial_u(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def chebyshev_polynomial_u(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'chebyshev_polynomial_v': (
            'def chebyshev_polynomial_v(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def chebyshev_polynomial_v(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def chebyshev_polynomial_v(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'chebyshev_polynomial_w': (
            'def chebyshev_polynomial_w(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def chebyshev_polynomial_w(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def chebyshev_polynomial_w(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'hermite_polynomial_h': (
            'def hermite_polynomial_h(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def hermite_polynomial_h(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def hermite_polynomial_h(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'hermite_polynomial_he': (
            'def hermite_polynomial_he(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def hermite_polynomial_he(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def hermite_polynomial_he(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'laguerre_polynomial_l': (
            'def laguerre_polynomial_l(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def laguerre_polynomial_l(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def laguerre_polynomial_l(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'legendre_polynomial_p': (
            'def legendre_polynomial_p(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def legendre_polynomial_p(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def legendre_polynomial_p(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'modified_bessel_i0': (
            'def modified_bessel_i0(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'modified_bessel_i1': (
            'def modified_bessel_i1(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'modified_bessel_k0': (
            'def modified_bessel_k0(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'modified_bessel_k1': (
            'def modified_bessel_k1(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'scaled_modified_bessel_k0': (
            'def scaled_modified_bessel_k0(x: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'scaled_modified_bessel_k1': (
            'def scaled_modified_bessel_k1(x: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'shifted_chebyshev_polynomial_t': (
            'def shifted_chebyshev_polynomial_t(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def shifted_chebyshev_polynomial_t(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def shifted_chebyshev_polynomial_t(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'shifted_chebyshev_polynomial_u': (
            'def shifted_chebyshev_polynomial_u(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def shifted_chebyshev_polynomial_u(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def shifted_chebyshev_polynomial_u(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'shifted_chebyshev_polynomial_v': (
            'def shifted_chebyshev_polynomial_v(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def shifted_chebyshev_polynomial_v(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def shifted_chebyshev_polynomial_v(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'shifted_chebyshev_polynomial_w': (
            'def shifted_chebyshev_polynomial_w(x: Tensor, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def shifted_chebyshev_polynomial_w(x: Number | _complex, n: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
            'def shifted_chebyshev_polynomial_w(x: Tensor, n: Number | _complex, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'spherical_bessel_j0': (
            'def spherical_bessel_j0(x: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
    },
    'linalg/__init__.py': {
        'cross': (
            'def cross(input: Tensor, other: Tensor, *, dim: _int=-1, out: Tensor | None=None) -> Tensor: ...',
        ),
        'cholesky': (
            'def cholesky(input: Tensor, *, upper: _bool=False, out: Tensor | None=None) -> Tensor: ...',
        ),
        'cholesky_ex': (
            'def cholesky_ex(input: Tensor, *, upper: _bool=False, check_errors: _bool=False, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_cholesky_ex: ...',
        ),
        'inv': (
            'def inv(A: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'solve_ex': (
            'def solve_ex(A: Tensor, B: Tensor, *, left: _bool=True, check_errors: _bool=False, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_solve_ex: ...',
        ),
        'inv_ex': (
            'def inv_ex(A: Tensor, *, check_errors: _bool=False, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_inv_ex: ...',
        ),
        'det': (
            'def det(A: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'slogdet': (
            'def slogdet(A: Tensor, *, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_slogdet: ...',
        ),
        'eig': (
            'def eig(input: Tensor, *, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_eig: ...',
        ),
        'eigvals': (
            'def eigvals(input: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'eigh': (
            "def eigh(input: Tensor, UPLO: str='L', *, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_eigh: ...",
        ),
        'eigvalsh': (
            "def eigvalsh(input: Tensor, UPLO: str='L', *, out: Tensor | None=None) -> Tensor: ...",
        ),
        'householder_product': (
            'def householder_product(input: Tensor, tau: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ldl_factor': (
            'def ldl_factor(input: Tensor, *, hermitian: _bool=False, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_ldl_factor: ...',
        ),
        'ldl_factor_ex': (
            'def ldl_factor_ex(input: Tensor, *, hermitian: _bool=False, check_errors: _bool=False, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_ldl_factor_ex: ...',
        ),
        'ldl_solve': (
            'def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: _bool=False, out: Tensor | None=None) -> Tensor: ...',
        ),
        'lstsq': (
            'def lstsq(input: Tensor, b: Tensor, rcond: _float | None=None, *, driver: str | None=None, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_lstsq: ...',
        ),
        'matrix_power': (
            'def matrix_power(input: Tensor, n: _int, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'matrix_rank': (
            'def matrix_rank(input: Tensor, *, atol: Tensor | None=None, rtol: Tensor | None=None, hermitian: _bool=False, out: Tensor | None=None) -> Tensor: ...',
            'def matrix_rank(input: Tensor, *, atol: _float | None=None, rtol: _float | None=None, hermitian: _bool=False, out: Tensor | None=None) -> Tensor: ...',
            'def matrix_rank(input: Tensor, tol: _float, hermitian: _bool=False, *, out: Tensor | None=None) -> Tensor: ...',
            'def matrix_rank(input: Tensor, tol: Tensor, hermitian: _bool=False, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'norm': (
            'def norm(input: Tensor, ord: Number | _complex | None=None, dim: _int | _size | None=None, keepdim: _bool=False, *, dtype: _dtype | None=None, out: Tensor | None=None) -> Tensor: ...',
            'def norm(input: Tensor, ord: str, dim: _int | _size | None=None, keepdim: _bool=False, *, dtype: _dtype | None=None, out: Tensor | None=None) -> Tensor: ...',
        ),
        'vector_norm': (
            'def vector_norm(input: Tensor, ord: Number | _complex=2, dim: _int | _size | None=None, keepdim: _bool=False, *, dtype: _dtype | None=None, out: Tensor | None=None) -> Tensor: ...',
        ),
        'matrix_norm': (
            'def matrix_norm(input: Tensor, ord: Number | _complex, dim: _size=(-2, -1), keepdim: _bool=False, *, dtype: _dtype | None=None, out: Tensor | None=None) -> Tensor: ...',
            "def matrix_norm(input: Tensor, ord: str='fro', dim: _size=(-2, -1), keepdim: _bool=False, *, dtype: _dtype | None=None, out: Tensor | None=None) -> Tensor: ...",
        ),
        'matmul': (
            'def matmul(input: Tensor, other: Tensor, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'diagonal': (
            'def diagonal(A: Tensor, *, offset: _int=0, dim1: _int=-2, dim2: _int=-1) -> Tensor: ...',
        ),
        'multi_dot': (
            'def multi_dot(tensors: tuple[Tensor, ...] | list[Tensor] | None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'svd': (
            'def svd(A: Tensor, full_matrices: _bool=True, *, driver: str | None=None, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_svd: ...',
        ),
        'svdvals': (
            'def svdvals(A: Tensor, *, driver: str | None=None, out: Tensor | None=None) -> Tensor: ...',
        ),
        'cond': (
            'def cond(input: Tensor, p: Number | _complex | None=None, *, out: Tensor | None=None) -> Tensor: ...',
            'def cond(input: Tensor, p: str, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'pinv': (
            'def pinv(input: Tensor, *, atol: Tensor | None=None, rtol: Tensor | None=None, hermitian: _bool=False, out: Tensor | None=None) -> Tensor: ...',
            'def pinv(input: Tensor, *, atol: _float | None=None, rtol: _float | None=None, hermitian: _bool=False, out: Tensor | None=None) -> Tensor: ...',
            'def pinv(input: Tensor, rcond: _float, hermitian: _bool=False, *, out: Tensor | None=None) -> Tensor: ...',
            'def pinv(input: Tensor, rcond: Tensor, hermitian: _bool=False, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'matrix_exp': (
            'def matrix_exp(input: Tensor) -> Tensor: ...',
        ),
        'solve': (
            'def solve(A: Tensor, B: Tensor, *, left: _bool=True, out: Tensor | None=None) -> Tensor: ...',
        ),
        'solve_triangular': (
            'def solve_triangular(input: Tensor, B: Tensor, *, upper: _bool, left: _bool=True, unitriangular: _bool=False, out: Tensor | None=None) -> Tensor: ...',
        ),
        'lu_factor': (
            'def lu_factor(A: Tensor, *, pivot: _bool=True, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_lu_factor: ...',
        ),
        'lu_factor_ex': (
            'def lu_factor_ex(A: Tensor, *, pivot: _bool=True, check_errors: _bool=False, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_lu_factor_ex: ...',
        ),
        'lu_solve': (
            'def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: _bool=True, adjoint: _bool=False, out: Tensor | None=None) -> Tensor: ...',
        ),
        'lu': (
            'def lu(A: Tensor, *, pivot: _bool=True, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_lu: ...',
        ),
        'tensorinv': (
            'def tensorinv(input: Tensor, ind: _int=2, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'tensorsolve': (
            'def tensorsolve(input: Tensor, other: Tensor, dims: _size | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'qr': (
            "def qr(A: Tensor, mode: str='reduced', *, out: Tensor | tuple[Tensor, ...] | list[Tensor] | None=None) -> torch.return_types.linalg_qr: ...",
        ),
        'vander': (
            'def vander(x: Tensor, *, N: _int | SymInt | None=None) -> Tensor: ...',
        ),
        'vecdot': (
            'def vecdot(x: Tensor, y: Tensor, *, dim: _int=-1, out: Tensor | None=None) -> Tensor: ...',
        ),
    },
    'fft/__init__.py': {
        'fft': (
            'def fft(input: Tensor, n: _int | SymInt | None=None, dim: _int=-1, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ifft': (
            'def ifft(input: Tensor, n: _int | SymInt | None=None, dim: _int=-1, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'fft2': (
            'def fft2(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size=(-2, -1), norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ifft2': (
            'def ifft2(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size=(-2, -1), norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'fftn': (
            'def fftn(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size | None=None, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ifftn': (
            'def ifftn(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size | None=None, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'rfft': (
            'def rfft(input: Tensor, n: _int | SymInt | None=None, dim: _int=-1, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'irfft': (
            'def irfft(input: Tensor, n: _int | SymInt | None=None, dim: _int=-1, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'rfft2': (
            'def rfft2(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size=(-2, -1), norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'irfft2': (
            'def irfft2(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size=(-2, -1), norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'rfftn': (
            'def rfftn(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size | None=None, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'irfftn': (
            'def irfftn(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size | None=None, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'hfft': (
            'def hfft(input: Tensor, n: _int | SymInt | None=None, dim: _int=-1, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ihfft': (
            'def ihfft(input: Tensor, n: _int | SymInt | None=None, dim: _int=-1, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'hfft2': (
            'def hfft2(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size=(-2, -1), norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ihfft2': (
            'def ihfft2(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size=(-2, -1), norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'hfftn': (
            'def hfftn(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size | None=None, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'ihfftn': (
            'def ihfftn(input: Tensor, s: _int | SymInt | Sequence[_int | SymInt] | None=None, dim: _int | _size | None=None, norm: str | None=None, *, out: Tensor | None=None) -> Tensor: ...',
        ),
        'fftfreq': (
            'def fftfreq(n: _int, d: _float=1.0, *, out: Tensor | None=None, dtype: _dtype | None=None, layout: _layout | None=None, device: DeviceLikeType | None=None, pin_memory: _bool | None=False, requires_grad: _bool | None=False) -> Tensor: ...',
        ),
        'rfftfreq': (
            'def rfftfreq(n: _int, d: _float=1.0, *, out: Tensor | None=None, dtype: _dtype | None=None, layout: _layout | None=None, device: DeviceLikeType | None=None, pin_memory: _bool | None=False, requires_grad: _bool | None=False) -> Tensor: ...',
        ),
        'fftshift': (
            'def fftshift(input: Tensor, dim: _int | _size | None=None) -> Tensor: ...',
        ),
        'ifftshift': (
            'def ifftshift(input: Tensor, dim: _int | _size | None=None) -> Tensor: ...',
        ),
    },
}
