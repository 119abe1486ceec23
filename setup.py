"""Builds hetnet with CMake and packages `hetnet` (with _C and libhetnet.so) and `caffe2`.

    pip install .                         # offline: pip install --no-build-isolation .
Environment: HETNET_BUILD_DIR (reuse a CMake build directory), HETNET_CMAKE_ARGS (extra -D...),
HETNET_BUILD_JOBS (parallel jobs, default 2).
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        import pybind11

        build_dir = os.environ.get("HETNET_BUILD_DIR") or os.path.abspath(
            os.path.join(self.build_temp, "cmake"))
        configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DHETNET_BUILD_TESTS=OFF",
                     "-DHETNET_BUILD_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable,
                     "-Dpybind11_DIR=" + pybind11.get_cmake_dir()]
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            configure += ["-DCMAKE_BUILD_TYPE=Release"]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("HETNET_CMAKE_ARGS", ""))
        subprocess.check_call(configure)
        jobs = os.environ.get("HETNET_BUILD_JOBS", "2")
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs, "--target", "hetnet_python"])

        # <build_lib>/hetnet/_C...so: copy the laid-out packages (symlinks resolved) and the runtime
        # library next to _C, where its $ORIGIN rpath finds it.
        package_dir = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        build_lib = os.path.dirname(package_dir)
        for package in ("hetnet", "caffe2"):
            shutil.copytree(os.path.join(build_dir, "python", package), os.path.join(build_lib, package),
                            symlinks=False, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for lib in glob.glob(os.path.join(build_dir, "lib", "libhetnet.so*")):
            shutil.copy2(lib, package_dir)


setup(
    packages=[],  # laid out by build_ext from the CMake build (see CMakeBuild)
    py_modules=[],
    ext_modules=[CMakeExtension("hetnet._C")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"}},
    zip_safe=False,
)
