"""Build: the Python package `sqltok`, with `udfs/`, `sql/` and the Cython extensions of `cython_src/`
installed inside it (the repository keeps them as top-level folders, one concept each)."""
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

CXX_ARGS = ["-O3", "-std=c++17"] if sys.platform != "win32" else ["/O2", "/std:c++17"]
OPENMP = {"win32": ["/openmp"], "darwin": []}.get(sys.platform, ["-fopenmp"])
# The merge loops shift a few ints per merge: GCC would turn each such loop into a call to memmove
# (3.7% of the time spent on pretokens seen for the first time).
SHORT_LOOPS = ("-fno-tree-loop-distribute-patterns",) if sys.platform == "linux" else ()


def ext(name: str, openmp: bool = False, flags: tuple[str, ...] = ()) -> Extension:
    """Extension `sqltok._<name>` from `cython_src/<name>.pyx`; `openmp` for modules with prange."""
    return Extension(
        f"sqltok._{name}",
        [f"cython_src/{name}.pyx"],
        include_dirs=["cython_src"],
        language="c++",
        extra_compile_args=CXX_ARGS + (OPENMP if openmp else []) + list(flags),
        extra_link_args=OPENMP if openmp and sys.platform != "win32" else [],
    )


setup(
    packages=["sqltok", "sqltok.formats", "sqltok.udfs", "sqltok.sql"],
    package_dir={"sqltok": "sqltok", "sqltok.udfs": "udfs", "sqltok.sql": "sql"},
    package_data={"sqltok.sql": ["*.sql"], "sqltok": ["data/*"]},
    ext_modules=cythonize(
        [ext("pretokenize"), ext("bpe_train"), ext("bpe_phase2"),
         ext("bpe_encode", openmp=True, flags=SHORT_LOOPS), ext("normalize", openmp=True),
         ext("wordpiece", openmp=True)],
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                             "cdivision": True, "initializedcheck": False},
        include_path=["cython_src"],
    ),
)
