"""Builds chalk._chalk with the project's CMake build (the release preset's build/release,
or CHALK_BUILD_DIR) and installs it with the Python package under python/chalk.
Configuration lives in pyproject.toml; python/README.md explains the install command."""
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("CHALK_BUILD_DIR", os.path.join(ROOT, "build", "release"))
        base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
        configure = ["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DCHALK_PYTHON=ON"]
        cache = os.path.join(build_dir, "CMakeCache.txt")
        cached = ""
        if os.path.exists(cache):
            for line in open(cache):
                if line.startswith("CHALK_PYTHON_EXECUTABLE:"):
                    cached = os.path.realpath(line.split("=", 1)[1].strip())
        if cached != base:  # build for the interpreter pip runs under
            configure.append(f"-DCHALK_PYTHON_EXECUTABLE={base}")
        subprocess.check_call(configure, stdout=subprocess.DEVNULL)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_chalk", "-j", jobs])
        built = os.path.join(build_dir, "python", "chalk", "_chalk" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not os.path.exists(built):
            raise RuntimeError(f"chalk: the build made no {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[Extension("chalk._chalk", sources=[])], cmdclass={"build_ext": CMakeBuild}, zip_safe=False)
