# shellcheck shell=bash
# The caterva2 client of scripts/clients-tests.sh (its usage text documents it): sourced by that
# script after its setup and scripts/clients/common.sh; `scripts/clients-tests.sh caterva2` runs
# the function caterva2 below.
# shellcheck disable=SC2154  # root and work: set by scripts/clients-tests.sh

# --- caterva2 ------------------------------------------------------------------------------

# The maps hook of every Python process of the caterva2 run (the test process and the servers it
# starts as children): at exit, or on SIGTERM/SIGHUP, it appends one JSON line {pid, argv, libs}
# to $CLIENTS_MAPS_LOG (libs: the libblosc2*/libb2nd* in /proc/self/maps); a connection to
# something else than loopback is refused and written at once as {pid, argv, net}. It is run by
# a .pth file in the venv's site-packages when CLIENTS_MAPS_HOOK names it: a sitecustomize.py on
# PYTHONPATH would miss the servers of test_peers.py and test_providers.py, started with
# PYTHONPATH=os.getcwd().
write_maps_hook() {  # SITE-PACKAGES
    cat >"$work/clients_maps_hook.py" <<'EOF'
"""Written by scripts/clients-tests.sh caterva2: record the Blosc2 libraries each process maps."""
import os

_LOG = os.environ.get("CLIENTS_MAPS_LOG")
if _LOG:
    import atexit, ipaddress, json, signal, socket, sys

    # once per process (a venv's lib64 -> lib makes site.py read the .pth twice)
    sys.modules["clients_maps_hook"] = type(sys)("clients_maps_hook")
    _done = []

    def _write(rec):
        rec.update(pid=os.getpid(), argv=list(sys.argv))
        fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps(rec) + "\n").encode())
        finally:
            os.close(fd)

    def _mapped():
        libs = set()
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if os.path.basename(path).startswith(("libblosc2", "libb2nd")):
                        libs.add(path)
        return sorted(libs)

    def _dump():
        if not _done:
            _done.append(1)
            _write({"libs": _mapped()})

    atexit.register(_dump)

    # uvicorn handles SIGTERM itself, then restores the previous handler and raises the signal
    # again: with SIG_DFL there the server would die without running atexit
    def _on_signal(sig, frame):
        _dump()
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    for _s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(_s) == signal.SIG_DFL:
            signal.signal(_s, _on_signal)

    # the tests must reach nothing but localhost: refuse (and record) anything else
    def _local(host):
        if host is None:
            return True
        if isinstance(host, bytes):
            host = host.decode()
        h = str(host).strip("[]").lower()
        if h in ("", "localhost", "localhost.localdomain", "ip6-localhost") or h.endswith(".localhost"):
            return True
        try:
            ip = ipaddress.ip_address(h.split("%")[0])
        except ValueError:
            return False
        return ip.is_loopback or ip.is_unspecified

    def _refuse(what):
        _write({"net": what})

    _getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, *a, **k):
        if not _local(host):
            _refuse(f"getaddrinfo {host}")
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: refused by clients-tests.sh (not localhost)")
        return _getaddrinfo(host, *a, **k)

    socket.getaddrinfo = getaddrinfo

    def _guard(meth):
        def wrapper(self, address, *a, **k):
            if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
                _refuse(f"connect {address!r}")
                raise OSError(101, f"{address!r}: refused by clients-tests.sh (not localhost)")
            return meth(self, address, *a, **k)
        return wrapper

    socket.socket.connect = _guard(socket.socket.connect)
    socket.socket.connect_ex = _guard(socket.socket.connect_ex)
EOF
    # site.py executes the lines of a .pth that start with "import"
    echo 'import os, sys; _p = os.environ.get("CLIENTS_MAPS_HOOK"); _p and "clients_maps_hook" not in sys.modules and exec(compile(open(_p).read(), _p, "exec"), {"__name__": "clients_maps_hook"})' \
        >"$1/clients_maps_hook.pth"
}

caterva2() {
    local ver=2026.9.2 venv site tgz h5whl run stamp netns=() refopt=()
    venv=$work/$([[ $REF == 1 ]] && echo ref-venv || echo venv)
    make_venv "$venv" setuptools wheel
    install_pyblosc2 "$venv"
    (( REF )) || [[ -n $PYB2_WHEEL ]] || die "caterva2 needs python-blosc2 built against libb2nd: run scripts/python-blosc2-tests.sh or set PYBLOSC2_WHEEL"
    select_lib "$venv"
    export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # hdf5plugin: the wheel of `scripts/clients-tests.sh hdf5plugin [--ref]` (libh5blosc2.so linked
    # to the Blosc2 library), installed before caterva2[tests] so that pip keeps it. The PyPI
    # wheel's libh5blosc2.so has c-blosc2 3.3.2 linked in statically, invisible to the map check.
    h5whl=$(first_file "$root/build/clients/hdf5plugin/wheel-$MODE"/hdf5plugin-*.whl)
    if [[ -z $h5whl ]]; then
        log "no hdf5plugin wheel in build/clients/hdf5plugin/wheel-$MODE: running scripts/clients-tests.sh hdf5plugin $([[ $REF == 1 ]] && echo --ref)"
        if (( REF )); then refopt=(--ref); fi
        "$0" hdf5plugin "${refopt[@]}" >&2
        h5whl=$(first_file "$root/build/clients/hdf5plugin/wheel-$MODE"/hdf5plugin-*.whl)
        [[ -n $h5whl ]] || die "no hdf5plugin wheel in build/clients/hdf5plugin/wheel-$MODE (scripts/clients-tests.sh hdf5plugin $([[ $REF == 1 ]] && echo --ref) failed)"
    fi
    stamp="$(sha256sum "$h5whl" | cut -c1-64) caterva2==$ver"
    if [[ ! -f $venv/.caterva2-ok || $(cat "$venv/.caterva2-ok") != "$stamp" ]] \
            || ! "$venv/bin/python" -m pip show caterva2 >/dev/null 2>&1; then
        log "installing $h5whl into $(basename "$venv")"
        "$venv/bin/python" -m pip install --quiet --only-binary :all: h5py numpy || die "pip install h5py numpy"
        "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$h5whl" || die "pip install $h5whl"
        tgz=$work/caterva2-$ver.tar.gz
        if [[ ! -f $tgz ]]; then
            log "downloading the caterva2==$ver sdist from PyPI"
            "$PY" -m pip download --quiet --no-deps --no-binary caterva2 "caterva2==$ver" -d "$work" >&2 \
                || die "pip download of the caterva2 sdist failed"
            [[ -f $tgz ]] || die "no caterva2-$ver.tar.gz after pip download"
        fi
        log "installing caterva2[tests] $ver from $tgz (log $work/install-$MODE.log)"
        "$venv/bin/python" -m pip install --prefer-binary "${tgz}[tests]" >"$work/install-$MODE.log" 2>&1 \
            || { tail -20 "$work/install-$MODE.log" >&2; die "pip install caterva2[tests] failed"; }
        echo "$stamp" >"$venv/.caterva2-ok"
    fi
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    # pip must have kept both: python-blosc2 and hdf5plugin linked to the library. The reference
    # wheel's blosc2_ext has c-blosc2 3.3.5 linked in statically (its lib/libblosc2.so is for
    # other clients): there it is the reference by construction, and only the version is checked.
    if (( REF )); then
        [[ $("$venv/bin/python" -m pip show blosc2 2>/dev/null | sed -n 's/^Version: //p') == "$REF_VERSION" ]] \
            || die "pip replaced blosc2==$REF_VERSION in $(basename "$venv")"
        log "python-blosc2: blosc2==$REF_VERSION (blosc2_ext with c-blosc2 3.3.5 linked in statically)"
        check_ldd "$site"/hdf5plugin/plugins/libh5blosc2.so
    else
        check_ldd "$site"/blosc2/blosc2_ext*.so "$site"/hdf5plugin/plugins/libh5blosc2.so
    fi
    write_maps_check
    write_pytest_runner
    write_maps_hook "$site"
    cat >"$work/run_tests.py" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["CLIENTS_WORK"])
import clients_maps, clients_pytest
import numpy as np, blosc2, h5py, hdf5plugin, caterva2
print("== caterva2", caterva2.__version__, "python-blosc2", blosc2.__version__, "on", blosc2.blosclib_version,
      "hdf5plugin", hdf5plugin.version, file=sys.stderr)
a = np.arange(100_000, dtype="f8")
assert (blosc2.decompress2(blosc2.compress2(a, typesize=8)) == a.tobytes())
with h5py.File("smoke.h5", "w") as f:
    f.create_dataset("d", data=a.reshape(100, 1000), chunks=(10, 1000), **hdf5plugin.Blosc2(cname="zstd", clevel=5))
with h5py.File("smoke.h5", "r") as f:
    assert (f["d"][...] == a.reshape(100, 1000)).all()
os.remove("smoke.h5")
clients_maps.check("after blosc2 and hdf5plugin round trips")
# test_loadfromurl downloads from github.com: deselected (it also skips without CATERVA2_SECRET)
res = clients_pytest.run(["-p", "no:cacheprovider", "-rfE", "-Wignore::pytest.PytestAssertRewriteWarning",
                          "-k", "not test_loadfromurl", "--pyargs", "caterva2.tests"], "caterva2")
clients_maps.check("after the tests")
print("%d passed, %d failed, %d skipped" % res)
EOF
    # every process of the run in a network namespace of its own, with only the loopback
    # interface (when unshare/ip allow it); the server listens on localhost:8000 there
    if unshare -n true 2>/dev/null; then netns=(unshare -n)
    elif unshare -rn true 2>/dev/null; then netns=(unshare -rn)
    fi
    if (( ${#netns[@]} )) && command -v ip >/dev/null \
            && "${netns[@]}" sh -c 'ip link set lo up' 2>/dev/null; then
        log "running in a private network namespace (${netns[*]}), loopback only"
    else
        netns=() && log "no private network namespace (unshare -n failed): non-loopback connections are only refused by sitecustomize"
    fi
    run=$work/run-$MODE
    rm -rf "$run" && mkdir -p "$run/home" && : >"$work/maps-$MODE.log"
    log "caterva2 tests ($MODE), log $work/test-$MODE.log"
    # CATERVA2_SECRET unset: the server runs without login (the tests that need it skip);
    # HOME: no ~/.caterva2*.toml of the user
    # shellcheck disable=SC2016  # sh -c's own script: its $1 and $@ are its arguments
    (cd "$run" && env -u CATERVA2_SECRET HOME="$run/home" TMPDIR="$run" \
        CLIENTS_WORK="$work" CLIENTS_LIBDIR="$LIBDIR" CLIENTS_MAPS_LOG="$work/maps-$MODE.log" \
        CLIENTS_MAPS_HOOK="$work/clients_maps_hook.py" \
        timeout "$TIMEOUT" "${netns[@]}" sh -c '[ -z "$1" ] || ip link set lo up; shift; exec "$@"' sh "${netns[*]}" \
        "$venv/bin/python" "$work/run_tests.py") >"$work/test-$MODE.log" 2>&1
    local r=$? line
    grep -E '^== |^FAILED ' "$work/test-$MODE.log" | cut -c1-300 >&2
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$work/test-$MODE.log" | tail -1)
    [[ -n $line ]] || { tail -20 "$work/test-$MODE.log" >&2; die "the test run ended without a summary (exit $r)"; }
    # the map of every Python process of the run (the servers included)
    "$venv/bin/python" - "$work/maps-$MODE.log" "$LIBDIR" <<'EOF' >&2 || die "maps check of the run's processes failed"
import json, os, sys
want = os.path.realpath(sys.argv[2])
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
procs = [r for r in recs if "libs" in r]
net = [r for r in recs if "net" in r]
bad = sorted({p for r in procs for p in r["libs"] if os.path.dirname(os.path.realpath(p)) != want})
libs = sorted({p for r in procs for p in r["libs"]})
is_server = lambda r: any("caterva2/services/server" in a or "caterva2.services.server" in a for a in r["argv"][:2])
servers = [r for r in procs if is_server(r)]
print(f"== maps of the run's processes: {len(procs)} recorded, {sum(1 for r in procs if r['libs'])} with Blosc2 mapped, "
      f"{len(servers)} caterva2 servers ({sum(1 for r in servers if r['libs'])} with Blosc2): {' '.join(libs) or 'none'}")
for r in net:
    print(f"== network refused in pid {r['pid']} ({' '.join(r['argv'])[:120]}): {r['net']}")
ok = True
if bad:
    print(f"== maps check FAILED: want only {want}/, got {bad}"); ok = False
if not any(r["libs"] for r in procs):
    print("== maps check FAILED: no process mapped a Blosc2 library"); ok = False
if not any(r["libs"] for r in servers):
    print("== maps check FAILED: no caterva2 server process recorded with a Blosc2 library mapped"); ok = False
sys.exit(0 if ok else 1)
EOF
    echo "$line"
    [[ $line == *" 0 failed,"* ]]
}
