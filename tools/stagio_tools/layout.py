"""Where libstagio.so and stagio-iond are: in a build directory, or where `cmake --install`
put them.

In the source tree the `stagio` command uses the build directory next to it (or --build). An
installed `stagio` has no build directory: the install writes installed.json beside this file,
naming the library and the daemon under the prefix it installed to (cmake/install.cmake).
"""

import json
import os

INSTALLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "installed.json")


def installed():
    """{"library": path, "iond": path} of an installed stagio, or None in the source tree."""
    if not os.path.isfile(INSTALLED):
        return None
    with open(INSTALLED) as handle:
        return json.load(handle)


def default_build_dir(repo_dir):
    """The build directory the commands use without --build; "" when installed."""
    return "" if installed() else os.path.join(repo_dir, "build")


def library(build_dir):
    return os.path.join(build_dir, "libstagio.so") if build_dir else installed()["library"]


def iond(build_dir):
    return os.path.join(build_dir, "stagio-iond") if build_dir else installed()["iond"]
