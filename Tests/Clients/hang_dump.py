"""A client's stacks for Tests/stress.sh when a run hangs: imported, it registers this process so
that SIGUSR1 writes every thread's Python stack to $TMPDIR/authsim-python-stacks/<pid>.txt (the
file exists from the import on, which is how stress.sh knows the signal is safe to send). The file
goes when the process ends normally.
"""
import atexit
import faulthandler
import os
import signal
import tempfile

_folder = os.path.join(tempfile.gettempdir(), "authsim-python-stacks")
os.makedirs(_folder, exist_ok=True)
_path = os.path.join(_folder, f"{os.getpid()}.txt")
_file = open(_path, "w")
faulthandler.register(signal.SIGUSR1, file=_file, all_threads=True)


@atexit.register
def _forget():
    faulthandler.unregister(signal.SIGUSR1)
    _file.close()
    try:
        os.remove(_path)
    except OSError:
        pass
