"""Build the Cython extensions of the `sqltok` package (metadata lives in pyproject.toml).

Each extension is `sqltok/<family>/_<name>.pyx`; the C++ headers and `.pxd` files sit beside the code
that uses them (`sqltok/native/` for the ones several families share). OpenMP is used where the
compiler has it; without it the parallel loops run on one thread, with the same results.
"""
import os
import sys
import tempfile
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

FOLDERS = ["sqltok/native", "sqltok/pretokenizer", "sqltok/normalizers", "sqltok/bpe", "sqltok/wordpiece", "sqltok/sentencepiece", "sqltok/corpus",
           "sqltok/extend", "sqltok/unigram"]
MSVC = sys.platform == "win32"
CXX_ARGS = ["/O2", "/std:c++17"] if MSVC else ["-O3", "-std=c++17"]
# The merge loops shift a few ints per merge: GCC would turn each such loop into a call to memmove
# (3.7% of the time spent on pretokens seen for the first time). Clang has no such flag.
SHORT_LOOPS = ["-fno-tree-loop-distribute-patterns"]


#: Extensions with parallel loops (OpenMP), and those the merge loops are in (SHORT_LOOPS).
OPENMP_MODULES: set[str] = set()
SHORT_LOOP_MODULES: set[str] = set()


class BuildExt(build_ext):
    """Add OpenMP and GCC-only flags to the extensions that want them, when the compiler takes them
    (by name: cythonize hands build_ext new Extension objects)."""

    def build_extensions(self) -> None:
        openmp = ["/openmp"] if MSVC else ["-fopenmp"] if self._compiles(["-fopenmp"], True) else []
        gcc_flags = [] if MSVC else [f for f in SHORT_LOOPS if self._compiles([f], False)]
        for e in self.extensions:
            if e.name in OPENMP_MODULES:
                e.extra_compile_args += openmp
                e.extra_link_args += [] if MSVC else openmp
            if e.name in SHORT_LOOP_MODULES:
                e.extra_compile_args += gcc_flags
        super().build_extensions()

    def _compiles(self, flags: list[str], link: bool) -> bool:
        """True when the compiler builds (and, with `link`, links) a small C++ program with `flags`."""
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp, "probe.cpp")
            src.write_text("int main() { return 0; }\n")
            try:
                objects = self.compiler.compile([str(src)], output_dir=tmp, extra_postargs=flags)
                if link:
                    self.compiler.link_executable(objects, "probe", output_dir=tmp, extra_postargs=flags,
                                                  target_lang="c++")
            except Exception:  # CompileError, LinkError: the flag is not for this compiler
                return False
        return True


def ext(module: str, openmp: bool = False, short_loops: bool = False) -> Extension:
    """Extension `sqltok.<family>._<name>` from `sqltok/<family>/_<name>.pyx`; `openmp` for modules with
    prange."""
    if openmp:
        OPENMP_MODULES.add(module)
    if short_loops:
        SHORT_LOOP_MODULES.add(module)
    return Extension(module, [module.replace(".", "/") + ".pyx"], include_dirs=FOLDERS, language="c++",
                     extra_compile_args=list(CXX_ARGS), extra_link_args=[])


setup(
    ext_modules=cythonize(
        [ext("sqltok.pretokenizer._pretokenize", openmp=True), ext("sqltok.pretokenizer._pieces"), ext("sqltok.pretokenizer._batch_counts"), ext("sqltok.pretokenizer._scripts"), ext("sqltok.bpe._train"), ext("sqltok.bpe._concatenations"),
         ext("sqltok.bpe._phase2"),
         ext("sqltok.bpe._encode", openmp=True, short_loops=True), ext("sqltok.bpe._candidates", openmp=True),
         ext("sqltok.normalizers._normalize", openmp=True),
         ext("sqltok.wordpiece._encode", openmp=True), ext("sqltok.sentencepiece._encode", openmp=True), ext("sqltok.wordpiece._train"),
         ext("sqltok.wordpiece._words"), ext("sqltok.wordpiece._word_splits", openmp=True), ext("sqltok.pretokenizer._words", openmp=True), ext("sqltok.native._id_counts", openmp=True), ext("sqltok.native._added_split"), ext("sqltok.native._id_lists"), ext("sqltok.extend._merge"),
         ext("sqltok.corpus._language", openmp=True), ext("sqltok.corpus._scripts", openmp=True),
         ext("sqltok.corpus._minhash", openmp=True),
         ext("sqltok.unigram._charsmap"), ext("sqltok.unigram._characters"), ext("sqltok.unigram._seeds"),
         ext("sqltok.unigram._lattice", openmp=True), ext("sqltok.unigram._scores")],
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                             "cdivision": True, "initializedcheck": False},
        include_path=["."],
        nthreads=int(os.environ.get("SQLTOK_BUILD_JOBS", "0")),
    ),
    cmdclass={"build_ext": BuildExt},
)
