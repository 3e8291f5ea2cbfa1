"""dsh-tools Python Code Mode bootstrap: runs one model program in this fresh interpreter.

The host starts `python3 -I -B -c <this file>` ahead of a run, with fd 3 (host -> here) and
fd 4 (here -> host) carrying the private protocol: frames of a 4-byte big-endian length and
UTF-8 JSON. Here -> host: {"t":"log","s":stream,"text":...}, {"t":"call","id":n,"name":...,
"args":...}, {"t":"done","answer":...} where the answer is "v<json>" (a value), "u" (no
value), "i" (not lossless JSON), "e<message>" (an exception) or "m" (out of memory). Host ->
here: {"t":"start","code":...,"cpuSeconds":n,"maxDepth":n,"tools":[names]} once (after {"t":"ready"} said this
interpreter finished starting), then {"t":"result","id":n,"ok":value}
or {"t":"result","id":n,"error":message} per binding call. fds 0-2 are /dev/null: the
program's print(), sys.stdout/sys.stderr and logging are captured as log lines instead.
"""

import ast
import asyncio
import builtins
import io
import json
import logging
import math
import os
import queue
import re
import signal
import struct
import sys
import threading
import traceback

_FROM_HOST = 3
_TO_HOST = 4
_PROGRAM = "program.py"
_OUT_OF_MEMORY_EXIT = 86
_EXACT_INTEGERS = 2**53

_write_lock = threading.Lock()
_start_frames = queue.SimpleQueue()  # the start frame, from the reader thread
_pending = {}
_next_id = 0
_loop = None
_max_depth = 20_000  # replaced by the start frame's `maxDepth`


def _write_all(data):
    view = memoryview(data)
    while view:
        written = os.write(_TO_HOST, view)
        view = view[written:]


def _send(message):
    _send_text(json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")))


def _send_text(data):
    payload = data.encode("utf-8")
    with _write_lock:
        _write_all(struct.pack(">I", len(payload)) + payload)


def _dumps(value):
    """Compact JSON of a lossless value (see `_lossless_problem`) at any depth: json.dumps
    recurses and gives up a thousand levels down, so deeper values take an explicit stack."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except RecursionError:
        pass
    parts = []
    stack = [(value, None)]
    while stack:
        item, closing = stack.pop()
        if closing is not None:
            parts.append(closing)
            continue
        kind = type(item)
        if kind is dict:
            parts.append("{")
            stack.append((None, "}"))
            members = list(item.items())
            for index in range(len(members) - 1, -1, -1):
                key, member = members[index]
                stack.append((member, None))
                prefix = ("," if index else "") + json.dumps(key, ensure_ascii=False) + ":"
                stack.append((None, prefix))
        elif kind is list or kind is tuple:
            parts.append("[")
            stack.append((None, "]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], None))
                if index:
                    stack.append((None, ","))
        else:
            parts.append(json.dumps(item, ensure_ascii=False, allow_nan=False))
    return "".join(parts)


_TOKEN = re.compile(r'\s*(?:([\[\]{},:])|(")|(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null))')


def _loads(text):
    """json.loads at any depth: the host's frames are well formed but may nest deeper than
    json.loads recurses, in which case an explicit stack parses them."""
    try:
        return json.loads(text)
    except RecursionError:
        pass
    containers = []
    keys = []
    root = None
    key_next = False
    position = 0

    def place(value):
        nonlocal root
        if not containers:
            root = value
        elif type(containers[-1]) is list:
            containers[-1].append(value)
        else:
            containers[-1][keys[-1]] = value

    while True:
        match = _TOKEN.match(text, position)
        if match is None:
            break
        position = match.end()
        punctuation, quote, literal = match.groups()
        if quote:
            string, position = json.decoder.scanstring(text, position)
            if key_next:
                keys[-1] = string
                key_next = False
            else:
                place(string)
        elif literal:
            place(json.loads(literal))
        elif punctuation in "[{":
            container = [] if punctuation == "[" else {}
            place(container)
            containers.append(container)
            keys.append(None)
            key_next = punctuation == "{"
        elif punctuation in "]}":
            containers.pop()
            keys.pop()
            key_next = False
        elif punctuation == ",":
            key_next = type(containers[-1]) is dict
    return root


def _read_exact(count):
    chunks = []
    while count:
        chunk = os.read(_FROM_HOST, count)
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def _read_frame():
    header = _read_exact(4)
    if header is None:
        return None
    body = _read_exact(struct.unpack(">I", header)[0])
    if body is None:
        return None
    return body


def _clean(text):
    """Text the host can read: lone surrogates become U+FFFD."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _log(stream, text):
    _send({"t": "log", "s": stream, "text": _clean(text)})


class ToolCallError(Exception):
    """A failed tool call: `tool_name` is the tool, `message` says why."""

    def __init__(self, tool_name, message):
        super().__init__(message)
        self.tool_name = tool_name
        self.message = message

    def __str__(self):
        return self.message


def _path_text(path):
    parts = []
    while path is not None:
        path, key = path
        parts.append(key)
    parts.reverse()
    text = parts[0]
    for key in parts[1:]:
        text += f"[{json.dumps(key, ensure_ascii=False)}]" if isinstance(key, str) else f"[{key}]"
    return text


def _lossless_problem(root, name):
    """Why `root` is not lossless JSON, or None; an explicit stack, so depth is no issue
    beyond the run's bound (`transport.maxNestingDepth`, in the start frame)."""
    stack = [(False, root, (None, name), 0)]
    on_path = set()
    while stack:
        leaving, value, path, depth = stack.pop()
        if leaving:
            on_path.discard(id(value))
            continue
        kind = type(value)
        if value is None or kind is bool:
            continue
        if kind is int:
            if -_EXACT_INTEGERS <= value <= _EXACT_INTEGERS:
                continue
            return f"{_path_text(path)} is an integer beyond 2**53 (JSON numbers are doubles)"

        if kind is str:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return f"{_path_text(path)} is not valid Unicode (a lone surrogate)"
            continue
        if kind is float:
            if math.isnan(value):
                return f"{_path_text(path)} is NaN"
            if math.isinf(value):
                return f"{_path_text(path)} is {'Infinity' if value > 0 else '-Infinity'}"
            if value == 0 and math.copysign(1.0, value) < 0:
                return f"{_path_text(path)} is -0.0"
            continue
        if kind is dict or kind is list or kind is tuple:
            if id(value) in on_path:
                return f"{_path_text(path)} is circular"
            if depth >= _max_depth:
                return f"{_path_text(path)} nests deeper than {_max_depth} levels"
            on_path.add(id(value))
            stack.append((True, value, path, depth))
            if kind is dict:
                for key, member in reversed(list(value.items())):
                    if type(key) is not str:
                        return f"{_path_text(path)} has a non-string key ({type(key).__name__} {key!r})"
                    stack.append((False, member, (path, key), depth + 1))
            else:
                for index in range(len(value) - 1, -1, -1):
                    stack.append((False, value[index], (path, index), depth + 1))
            continue
        if kind is set or kind is frozenset:
            return f"{_path_text(path)} is a set"
        if kind is bytes or kind is bytearray or kind is memoryview:
            return f"{_path_text(path)} is bytes"
        return f"{_path_text(path)} is not plain JSON data ({kind.__name__})"
    return None


def _settle(frame):
    entry = _pending.pop(frame.get("id"), None)
    if entry is None:
        return
    future, name = entry
    if future.done():
        return
    if "error" in frame:
        future.set_exception(ToolCallError(name, frame["error"]))
    else:
        future.set_result(frame.get("ok"))


def _settle_unreadable(call_id, why):
    entry = _pending.pop(call_id, None)
    if entry is not None and not entry[0].done():
        entry[0].set_exception(ToolCallError(entry[1], why))


def _call(name, args, kwargs):
    global _next_id
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    if not args and not kwargs:
        # Nothing to send, and the fix is one `{}` away; nothing is dispatched.
        message = "arguments must be lossless JSON: no arguments were given (pass an object such as {})"
        future.set_exception(ToolCallError(name, message))
        return future
    if kwargs:
        problem = "expected one positional argument, got keyword arguments"
    elif len(args) != 1:
        problem = f"expected one argument, got {len(args)}"
    else:
        problem = _lossless_problem(args[0], "arguments")
    if problem is not None:
        future.set_exception(TypeError(f"arguments must be lossless JSON: {problem}"))
        return future
    _next_id += 1
    _pending[_next_id] = (future, name)
    try:
        frame = f'{{"t":"call","id":{_next_id},"name":{json.dumps(name, ensure_ascii=False)},"args":'
        _send_text(frame + _dumps(args[0]) + "}")
    except (ValueError, RecursionError) as error:
        _pending.pop(_next_id, None)
        future.set_exception(TypeError(f"arguments must be lossless JSON: {error}"))
    return future


def _binding(name):
    def call(*args, **kwargs):
        return _call(name, args, kwargs)

    call.__name__ = call.__qualname__ = f"tools[{name!r}]"
    return call


_bindings = {}  # name -> binding of the run's tools, filled from the start frame


class UnknownToolError(ToolCallError, AttributeError, KeyError):
    """A name that is not a binding: a ToolCallError naming the closest ones, and still the
    AttributeError / KeyError that `hasattr` and `getattr(tools, name, None)` expect."""

    __str__ = ToolCallError.__str__


def _edit_distance(a, b):
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def _distance_to_tool(name, tool):
    """Ignoring case, the nearer of the whole name and, for `mcp__server__tool`, the part
    after the last `__` (the TypeScript runtime's rule, by UTF-16 code unit there)."""
    wanted, whole = name.lower(), tool.lower()
    cut = whole.rfind("__")
    own = whole[cut + 2:] if cut > 0 else ""
    distance = _edit_distance(wanted, whole)
    return min(distance, _edit_distance(wanted, own)) if own else distance


def _unknown_tool(name):
    """`no tool named "x" (N tools visible; closest: "a", "b")`: up to three names within
    max(2, len // 3) edits, nearest first, ties by name."""
    count = len(_bindings)
    visible = "no tools visible" if count == 0 else "1 tool visible" if count == 1 else f"{count} tools visible"
    limit = max(2, len(name) // 3)
    near = sorted((d, tool) for tool in _bindings if (d := _distance_to_tool(name, tool)) <= limit)[:3]
    text = f"no tool named {json.dumps(name, ensure_ascii=False)} ({visible}"
    if near:
        text += "; closest: " + ", ".join(json.dumps(tool, ensure_ascii=False) for _, tool in near)
    return UnknownToolError(name, text + ")")


class _Tools:
    """`tools.name(args)` or `tools["my-tool"](args)` for exactly the tools the scope saw when
    the run started (`run_code` excluded): any other name raises UnknownToolError (a
    ToolCallError that is also an AttributeError or KeyError). Dunder names are reachable by
    subscript only; `in`, `len`, iteration and `dir` list the tools. The bindings live
    outside the object, so no tool name can collide with them."""

    __slots__ = ()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name not in _bindings:
            raise _unknown_tool(name)
        return _bindings[name]

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise TypeError("tool names are strings")
        try:
            return _bindings[name]
        except KeyError:
            raise _unknown_tool(name) from None

    def __setattr__(self, name, value):
        raise AttributeError("tools cannot be modified")

    def __delattr__(self, name):
        raise AttributeError("tools cannot be modified")

    def __contains__(self, name):
        return name in _bindings

    def __iter__(self):
        return iter(list(_bindings))

    def __len__(self):
        return len(_bindings)

    def __dir__(self):
        return list(_bindings)

    def __repr__(self):
        return "<tools>"


class _LineWriter(io.TextIOBase):
    """sys.stdout / sys.stderr: each complete line written becomes a log line."""

    def __init__(self, stream):
        super().__init__()
        self._stream = stream
        self._partial = ""

    @property
    def encoding(self):
        return "utf-8"

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            _log(self._stream, line)
        return len(text)

    def finish(self):
        if self._partial:
            _log(self._stream, self._partial)
            self._partial = ""


_stdout = _LineWriter("log")
_stderr = _LineWriter("error")
_builtin_print = builtins.print


def _print(*values, sep=" ", end="\n", file=None, flush=False):
    """One print() call is one log line (the final newline is the line's end)."""
    if file is not None and file is not _stdout and file is not _stderr:
        return _builtin_print(*values, sep=sep, end=end, file=file, flush=flush)
    text = (" " if sep is None else sep).join(str(value) for value in values)
    text += "\n" if end is None else end
    if text.endswith("\n"):
        text = text[:-1]
    _log("error" if file is _stderr else "log", text)


class _LogHandler(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.ERROR:
            stream = "error"
        elif record.levelno >= logging.WARNING:
            stream = "warn"
        elif record.levelno >= logging.INFO:
            stream = "info"
        else:
            stream = "debug"
        try:
            text = self.format(record)
        except Exception:
            text = str(record.msg)
        _log(stream, text)


def _capture_output():
    sys.stdout = sys.__stdout__ = _stdout
    sys.stderr = sys.__stderr__ = _stderr
    builtins.print = _print
    root = logging.getLogger()
    root.handlers[:] = [_LogHandler()]
    root.setLevel(logging.DEBUG)
    logging.getLogger("asyncio").disabled = True


def _compile(source):
    """The program as the body of `async def __program__()`, positions kept."""
    tree = ast.parse(source, _PROGRAM)
    arguments = ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )
    function = ast.AsyncFunctionDef(
        name="__program__",
        args=arguments,
        body=tree.body or [ast.Pass()],
        decorator_list=[],
        returns=None,
        type_comment=None,
    )
    if sys.version_info >= (3, 12):
        function.type_params = []
    function.lineno, function.col_offset = 1, 0
    module = ast.Module(body=[function], type_ignores=[])
    ast.fix_missing_locations(module)
    return compile(module, _PROGRAM, "exec", dont_inherit=True)


def _describe(error):
    if isinstance(error, ToolCallError):
        return f"ToolCallError: {error.message}"
    if isinstance(error, SyntaxError) and error.filename == _PROGRAM:
        where = f" at {_PROGRAM}:{error.lineno}"
        if error.offset:
            where += f":{error.offset}"
        return f"{type(error).__name__}: {error.msg}{where}"
    name = type(error).__name__
    try:
        message = str(error)
    except Exception:
        message = ""
    header = f"{name}: {message}" if message else name
    line = None
    for frame, number in traceback.walk_tb(error.__traceback__):
        if frame.f_code.co_filename == _PROGRAM:
            line = number
    return header + (f" at {_PROGRAM}:{line}" if line is not None else "")


def _answer_of(value):
    if value is None:
        return "u"
    if _lossless_problem(value, "result") is not None:
        return "i"
    try:
        return "v" + _dumps(value)
    except (ValueError, RecursionError):
        return "i"


def _read_results():
    """Reads the host's frames: the start frame goes to the main thread, every later one
    (a binding call's result) to the loop; on EOF (the host is gone) the whole group dies."""
    body = _read_frame()
    if body is None:
        os.killpg(0, signal.SIGKILL)
        os._exit(0)
    _start_frames.put(body)
    while True:
        body = _read_frame()
        if body is None:
            os.killpg(0, signal.SIGKILL)
            os._exit(1)
        try:
            frame = _loads(body.decode("utf-8"))
        except (ValueError, RecursionError, UnicodeDecodeError):
            call_id = None
            try:
                call_id = int(body.split(b'"id":', 1)[1].split(b",", 1)[0])
            except (IndexError, ValueError):
                pass
            _loop.call_soon_threadsafe(_settle_unreadable, call_id, "the tool result is too deeply nested")
            continue
        try:
            _loop.call_soon_threadsafe(_settle, frame)
        except RuntimeError:
            return


def _die_with_parent():
    """In every forked child: SIGKILL when its parent dies (PR_SET_PDEATHSIG), so a fork
    outlives neither the interpreter nor, through it, the host, even outside the group kill."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except Exception:
        return
    if os.getppid() == 1:
        os._exit(1)


def _main():
    """A fresh interpreter: serves exactly one run."""
    os.register_at_fork(after_in_child=_die_with_parent)
    _run()


def _prepare():
    """Everything a run needs that does not depend on its program, done before `ready` so
    the run does not wait for it: output capture, a fresh event loop, the thread reading the
    host's frames, and one dry pass over the run's own code path (in a fork server's child
    that also copies the pages the run will write, off the run's path)."""
    global _loop
    _capture_output()
    _loop = asyncio.new_event_loop()
    asyncio.set_event_loop(_loop)
    _answer_of(_loop.run_until_complete(_warm_up()))
    threading.Thread(target=_read_results, name="dsh-host", daemon=True).start()


async def _warm_up():
    namespace = {"__builtins__": builtins}
    exec(_compile("return [1, {'a': 'b'}]"), namespace)
    json.loads('{"t":"start","cpuSeconds":1,"maxDepth":1,"tools":[],"code":""}')
    return await namespace["__program__"]()


def _run():
    global _max_depth
    _prepare()
    _send({"t": "ready"})
    start = json.loads(_start_frames.get())
    try:
        import resource

        _max_depth = int(start.get("maxDepth", _max_depth))
        seconds = int(start.get("cpuSeconds", 0))
        if seconds > 0:
            resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    except (ImportError, ValueError, OSError):
        pass
    for name in start.get("tools", []):
        _bindings[name] = _binding(name)
    namespace = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "tools": _Tools(),
        "ToolCallError": ToolCallError,
    }
    try:
        try:
            exec(_compile(start.get("code", "")), namespace)
            program = namespace.pop("__program__")
            answer = _answer_of(_loop.run_until_complete(program()))
        except MemoryError:
            answer = "m"
        except BaseException as error:
            answer = "e" + _describe(error)
        _stdout.finish()
        _stderr.finish()
        _send({"t": "done", "answer": answer})
    except MemoryError:
        os._exit(_OUT_OF_MEMORY_EXIT)
    os._exit(0)


# The fork server. fd 3 is a SOCK_SEQPACKET socket to the host carrying JSON messages.
# Host -> here: {"fork":id,"dir":path} with the run's two pipe ends (read, write) and, when
# sandboxed, a Landlock ruleset to stack, as SCM_RIGHTS; {"release":pid}. Here -> host:
# {"ready":true} once; {"forked":id,"pid":pid} with a pidfd of the child, or
# {"failed":id,"why":text}; {"exit":pid,"status":wait-status} when a child ended (it is
# left unreaped, so its pid and group stay its own, until the host releases it).
_CONTROL = 3
_SYS_LANDLOCK_RESTRICT_SELF = 446


def _serve():
    """Imports everything a run needs, then forks one child per host request; runs no
    thread, holds no secret (its environment is empty), never runs a program itself."""
    import array
    import ctypes
    import gc
    import fcntl  # noqa: F401 - imported once here for every child
    import random
    import resource  # noqa: F401 - imported once here for every run's RLIMIT_CPU
    import select
    import socket

    libc = ctypes.CDLL(None, use_errno=True)
    control = socket.socket(fileno=_CONTROL)
    os.register_at_fork(after_in_child=_die_with_parent)
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    # Warm what every run touches, so no child pays for it.
    _compile("return 1")
    asyncio.new_event_loop().close()
    children = {}  # pid -> "running", "reported" (its end, to the host) or "released"

    def tell(message, fds=()):
        data = json.dumps(message).encode()
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        control.sendmsg([data], ancillary)

    tell({"ready": True})
    gc.freeze()
    while True:
        readable, _, _ = select.select([control, wake_read], [], [])
        if wake_read in readable:
            try:
                os.read(wake_read, 512)
            except BlockingIOError:
                pass
            for pid, state in list(children.items()):
                if state == "released":
                    if os.waitpid(pid, os.WNOHANG)[0] == pid:
                        del children[pid]
                    continue
                if state == "reported":
                    continue
                ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                if ended is None or ended.si_pid == 0:
                    continue
                children[pid] = "reported"
                if ended.si_code == os.CLD_EXITED:
                    status = (ended.si_status & 0xFF) << 8
                else:
                    status = ended.si_status | (0x80 if ended.si_code == os.CLD_DUMPED else 0)
                tell({"exit": pid, "status": status})
        if control not in readable:
            continue
        data, ancillary, _, _ = control.recvmsg(65536, socket.CMSG_SPACE(3 * 4))
        if not data:
            os._exit(0)
        fds = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                passed = array.array("i")
                passed.frombytes(payload[: len(payload) - len(payload) % passed.itemsize])
                fds.extend(passed)
        message = json.loads(data)
        if "release" in message:
            for fd in fds:
                os.close(fd)
            # Reaped now if it ended (its pid is free from here on), else as it ends.
            pid = message["release"]
            if pid in children:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    del children[pid]
                else:
                    children[pid] = "released"
            continue
        request = message.get("fork")
        try:
            pid = os.fork()
        except OSError as error:
            for fd in fds:
                os.close(fd)
            tell({"failed": request, "why": str(error)})
            continue
        if pid == 0:
            control.close()
            os.close(wake_read)
            os.close(wake_write)
            _become_run(libc, random, message.get("dir", "."), fds)
        for fd in fds:
            os.close(fd)
        children[pid] = "running"
        try:
            pidfd = os.pidfd_open(pid)
        except OSError as error:
            os.kill(pid, signal.SIGKILL)
            tell({"failed": request, "why": f"pidfd_open: {error}"})
            continue
        tell({"forked": request, "pid": pid}, [pidfd])
        os.close(pidfd)


def _become_run(libc, random, scratch, fds):
    """In a fresh child of the server: the per-run state (its own process group, the run's
    pipes as fds 3 and 4, its scratch dir as working directory, a Landlock layer confining
    its writes to it, a reseeded `random`), then exactly a fresh interpreter's run (whose
    asyncio loop is made new). Never returns."""
    import ctypes
    import fcntl

    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        if len(fds) < 2:
            raise ValueError("the fork request carried no pipes")
        # Above 4 first, so that placing one cannot clobber the other.
        read_end, write_end = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds[:2])
        os.close(fds[0])
        os.close(fds[1])
        os.dup2(read_end, _FROM_HOST)
        os.dup2(write_end, _TO_HOST)
        os.close(read_end)
        os.close(write_end)
        os.chdir(scratch)
        sys.argv[:] = ["-c"]
        if len(fds) > 2:
            if libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, fds[2], 0) != 0:
                error = ctypes.get_errno()
                _send({"t": "refused", "why": f"landlock_restrict_self: {os.strerror(error)}"})
                os._exit(1)
            os.close(fds[2])
        random.seed()
    except BaseException as error:  # noqa: BLE001 - anything here fails this child only
        try:
            _send({"t": "refused", "why": f"{type(error).__name__}: {error}"})
        finally:
            os._exit(1)
    _run()


if len(sys.argv) > 1 and sys.argv[1] == "serve":
    _serve()
else:
    _main()
