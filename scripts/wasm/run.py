"""Run WebAssembly programs (wasm32-wasip1) under wasmtime (the `wasmtime` package from
PyPI), for scripts/cross.sh wasm32.

    run.py PROGRAM.wasm [ARGS...]       run a program (cargo's runner: scripts/wasm/run)
    run.py --tests TEST.wasm...         run every test of Rust test programs, each alone

A program gets its arguments, the environment (TMPDIR set to the host's temporary directory
where unset, PWD to the directory run.py runs in) and the host's file system at the same
paths (the host's / is preopened as /): tests find their data by the absolute paths cargo
compiled into them. A WASI program starts in / whatever the host's directory: one that should
start in PWD changes into it (scripts/c-blosc2-tests.sh --wasi links that into its programs). The exit status is the
program's; a trap (a panic aborts: wasm32-wasip1 does not unwind) exits with 134, as SIGABRT
would.

--tests lists each program's tests (`--list`) and runs each test in an instance of its own
(`--exact NAME`), since the first panic ends an instance: one failing test then fails alone.
A program with a harness of its own (it lists nothing, and prints) is run once, as one test;
a program whose tests are all for other systems (`#![cfg(...)]`) lists none and counts none.
It prints one line per test (ok, FAILED, or ignored with the reason its attribute gives),
then `N passed, N failed, N ignored` (exit status 1 if any failed). A test's output is
printed when it fails. Compiled modules are kept in wasmtime's cache.
"""
import os
import sys
import tempfile

import wasmtime


def engine():
    config = wasmtime.Config()
    config.cache = True
    return wasmtime.Engine(config)


def run(eng, module, argv, stdout=None):
    """Run `module` with `argv`; its exit status (a trap: 134, after printing it)."""
    linker = wasmtime.Linker(eng)
    linker.define_wasi()
    store = wasmtime.Store(eng)
    wasi = wasmtime.WasiConfig()
    wasi.argv = argv
    env = dict(os.environ)
    env.setdefault("TMPDIR", tempfile.gettempdir())
    env["PWD"] = os.getcwd()
    wasi.env = list(env.items())
    wasi.preopen_dir("/", "/")
    wasi.inherit_stdin()
    if stdout:
        wasi.stdout_file = stdout
        wasi.stderr_file = stdout + ".err"
    else:
        wasi.inherit_stdout()
        wasi.inherit_stderr()
    store.set_wasi(wasi)
    instance = linker.instantiate(store, module)
    try:
        instance.exports(store)["_start"](store)
    except wasmtime.ExitTrap as e:
        return e.code
    except wasmtime.Trap as e:
        msg = f"run.py: {argv[0]}: {e}\n"
        if stdout:
            with open(stdout + ".err", "a") as f:
                f.write(msg)
        else:
            print(msg, end="", file=sys.stderr)
        return 134
    return 0


def read_text(path):
    with open(path) as f:
        return f.read()


def run_tests(progs):
    eng = engine()
    passed = failed = ignored = 0
    out = tempfile.mkdtemp(prefix="b2nd-wasm-tests-")
    log = os.path.join(out, "out")
    for prog in progs:
        module = wasmtime.Module.from_file(eng, prog)
        name = os.path.basename(prog)
        if run(eng, module, [prog, "--list", "--format", "terse"], log) != 0:
            print(f"{name}: cannot list its tests")
            print(read_text(log + ".err"), end="")
            failed += 1
            continue
        listing = read_text(log)
        tests = [l[: -len(": test")] for l in listing.splitlines() if l.endswith(": test")]
        if not tests and listing.strip():
            # A program with a harness of its own (tests/no_alloc.rs): it ran
            # its checks instead of listing them; run it once, as one test.
            status = run(eng, module, [prog], log)
            if status == 0:
                print(f"{name} (its own harness): ok")
                passed += 1
            else:
                print(f"{name} (its own harness): FAILED (exit {status})")
                print("\n".join("    " + l for l in (read_text(log) + read_text(log + ".err")).splitlines()[-8:]))
                failed += 1
            continue
        for t in tests:
            status = run(eng, module, [prog, "--exact", t, "--test-threads", "1", "--nocapture"], log)
            text = read_text(log)
            err = read_text(log + ".err")
            ignored_at = next((m for m in (f"test {t} ... ignored", f"test {t} - should panic ... ignored") if m in text), None)
            if status == 0 and ignored_at:
                reason = text.split(ignored_at, 1)[1].splitlines()[0].lstrip(", ")
                if "should panic" in ignored_at and not reason:
                    reason = "a should_panic test: panics abort on wasm32-wasip1"
                print(f"{name} {t}: ignored{': ' + reason if reason else ''}")
                ignored += 1
            elif status == 0 and "1 passed" in text:
                print(f"{name} {t}: ok")
                passed += 1
            else:
                print(f"{name} {t}: FAILED (exit {status})")
                lines = (text + err).splitlines()
                # the panic's message, then the end of the output
                at = next((k for k, l in enumerate(lines) if "panicked at" in l), None)
                shown = lines[at : at + 4] if at is not None else []
                shown += [l for l in lines[-6:] if l not in shown]
                print("\n".join("    " + l for l in shown))
                failed += 1
    print(f"{passed} passed, {failed} failed, {ignored} ignored")
    return 1 if failed else 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--tests":
        os._exit(run_tests(sys.argv[2:]))
    prog = sys.argv[1]
    eng = engine()
    status = run(eng, wasmtime.Module.from_file(eng, prog), [prog] + sys.argv[2:])
    sys.stdout.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
