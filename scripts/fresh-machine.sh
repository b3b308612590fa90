#!/usr/bin/env bash
# Replay the README and the client recipes of docs/CLIENTS.md, as written, on a fresh Debian 12
# made with debootstrap: a clone of this repository, the README's prerequisites, its two
# commands, an install, then each client's recipe in a venv of its own.
#
#   scripts/fresh-machine.sh [STEP...]
#
#   STEP   machine   make build/fresh/root (debootstrap --variant=minbase bookworm) and install
#                    the README's prerequisites there (its `sudo apt-get install` line)
#          readme    clone this repository's HEAD there and run the README's two commands
#          demo      the same, the demo only
#          install   ./scripts/install.sh /opt/b2nd (a prefix outside the loader's path)
#          python-blosc2 pytables hdf5plugin h5zblosc2 phdf5 adios2 hdf5-blosc2 imagecodecs caterva2
#                    that client's recipe: the Debian packages its section names
#                    (`apt-get install ...` in its text), then its ```sh block, run with
#                    PREFIX=/opt/b2nd in ~/clients/NAME with a new venv activated
#          default: every step, in this order. Each step's log: build/fresh/logs/STEP.log.
#          Each client starts from a copy of the machine as the install step left it (so
#          that its recipe's own packages are all it gets); ~/clients (build/fresh/clients)
#          is kept across them, for the clients that take the wheels of others.
#
# What a recipe runs is the text of the docs: python-blosc2's is the README's indented
# `USE_SYSTEM_BLOSC2=1 ...` command, the others the first ```sh block under the client's `## `
# heading in docs/CLIENTS.md. Lines whose comment ends in `a long run` (a whole test suite of
# hours) are skipped; scripts/clients-tests.sh runs those suites. The imagecodecs and caterva2
# recipes take the wheels of the python-blosc2 and hdf5plugin steps ($BLOSC2_WHEEL,
# $HDF5PLUGIN_WHEEL).
#
# Needs root (debootstrap, chroot, bind mounts) and network access to Debian, PyPI and crates.io.
# The fresh machine borrows from this one only:
#   - the Rust toolchain (RUSTUP_HOME, default ~/.rustup, mounted read-only): the README asks
#     for one, from rustup; crates come from crates.io;
#   - the CA certificates of /usr/local/share/ca-certificates (for networks that intercept TLS);
#   - GitHub, when FRESH_GITHUB_MIRROR names a directory of bare repositories OWNER+NAME/repo
#     (default /work/.mirror where there is one): git's url.insteadOf then sends every
#     https://github.com/OWNER/NAME[.git] clone there (submodules too), so that the recipes' own
#     `git clone`s and CMake's FetchContent run unchanged on a machine that cannot reach GitHub.
#     python-blosc2 4.14.1 needs Blosc/miniexpr, Blosc/minicc, shibatch/sleef and its submodule
#     shibatch/tlfloat; H5Zblosc2 and parallel HDF5 HDFGroup/hdf5_plugins (whose mirror lacks
#     blobs outside BLOSC2/: there `git archive` of BLOSC2/ at the pinned commit stands in for
#     the clone); ADIOS2 ornladios/ADIOS2. The phdf5 recipe builds this repository's
#     scripts/clients/phdf5_blosc2.c: B2ND_SRC is the clone the readme or install step made.
# Exit status: 0 when every step passed; the steps that failed are listed.
set -uo pipefail
root_dir=$(cd "$(dirname "$0")/.." && pwd)
FRESH=${FRESH_DIR:-$root_dir/build/fresh}
R=$FRESH/root
LOGS=$FRESH/logs
PREFIX_IN=/opt/b2nd
RUSTUP=${RUSTUP_HOME:-$HOME/.rustup}
MIRROR=${FRESH_GITHUB_MIRROR:-/work/.mirror}
ALL=(machine readme install python-blosc2 pytables hdf5plugin h5zblosc2 phdf5 adios2 hdf5-blosc2 imagecodecs caterva2)
log() { printf '== %s\n' "$*" >&2; }
die() { echo "fresh-machine: $*" >&2; exit 2; }
[[ $(id -u) == 0 ]] || die "needs root (debootstrap, chroot, mount)"
mkdir -p "$LOGS"

mounts() {
    local m
    mnt() {  # SRC DST [ro]
        mkdir -p "$R$2"
        mountpoint -q "$R$2" || mount --bind "$1" "$R$2" || die "mount $1"
        [[ ${3:-} != ro ]] || mount -o remount,bind,ro "$R$2"
    }
    mnt /proc /proc; mnt /sys /sys; mnt /dev /dev; mnt /dev/pts /dev/pts
    local stable=("$RUSTUP"/toolchains/*stable*)
    [[ -x ${stable[0]}/bin/cargo ]] \
        || die "no stable Rust toolchain under $RUSTUP"
    mnt "$RUSTUP" /opt/rustup ro
    mnt "$root_dir" /mnt/origin ro
    mkdir -p "$FRESH/clients"
    mnt "$FRESH/clients" /root/clients
    if [[ -d $MIRROR ]]; then
        mnt "$MIRROR" /mnt/github-mirror ro
        # https://github.com/OWNER/NAME and NAME.git -> the mirror's bare repository
        for m in "$MIRROR"/*+*/repo; do
            m=${m%/repo}; m=${m##*/}
            mkdir -p "$R/srv/github/${m%%+*}"
            ln -sfn "/mnt/github-mirror/$m/repo" "$R/srv/github/${m%%+*}/${m#*+}"
            ln -sfn "/mnt/github-mirror/$m/repo" "$R/srv/github/${m%%+*}/${m#*+}.git"
        done
    fi
    cp /etc/resolv.conf "$R/etc/resolv.conf"
}
umounts() {
    local d
    for d in /root/clients /mnt/github-mirror /mnt/origin /opt/rustup /dev/pts /dev /sys /proc; do
        mountpoint -q "$R$d" && umount -l "$R$d"
    done
    # nothing of this machine (its /dev, the repository) may be under $R when it is copied or removed
    if awk -v r="$R/" 'index($2 "/", r) == 1 {found = 1} END {exit !found}' /proc/self/mounts; then
        echo "still mounted under $R" >&2
        return 1
    fi
}

in_root() {  # run a bash command in the fresh machine, in a clean login environment
    chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 RUSTUP_HOME=/opt/rustup \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PREFIX=$PREFIX_IN \
        "$@"
}

step_machine() {
    if [[ ! -x $R/usr/bin/apt-get ]]; then
        command -v debootstrap >/dev/null || apt-get install -y -q debootstrap || die "no debootstrap"
        log "debootstrap bookworm into $R"
        debootstrap --variant=minbase bookworm "$R" http://deb.debian.org/debian || return 1
    fi
    mounts
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        mkdir -p "$R/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$R/usr/local/share/ca-certificates/" || return 1
    fi
    install -m755 "$RUSTUP/../.cargo/bin/rustup" "$R/usr/local/bin/rustup" 2>/dev/null \
        || install -m755 "$(command -v rustup)" "$R/usr/local/bin/rustup" || return 1
    local t; for t in cargo rustc rustdoc; do ln -sf rustup "$R/usr/local/bin/$t"; done
    # the README's prerequisites, as it writes them
    local apt
    apt=$(grep -m1 -E '^ +sudo apt-get install' "$root_dir/README.md" | sed -E 's/^ +sudo //; s/#.*//')
    [[ -n $apt ]] || { echo "no 'sudo apt-get install' line in README.md" >&2; return 1; }
    log "README: $apt"
    in_root bash -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive ${apt/apt-get install/apt-get install -y -q} \
        && (update-ca-certificates >/dev/null 2>&1 || true) \
        && git config --global safe.directory '*' \
        && { [ ! -d /srv/github ] || { git config --global url.file:///srv/github/.insteadOf https://github.com/ \
             && git config --global protocol.file.allow always; }; } \
        && cargo --version && gcc --version | head -1 && python3 --version"
}

step_clone() {
    in_root bash -c 'rm -rf ~/libb2nd && git clone -q /mnt/origin ~/libb2nd && git -C ~/libb2nd log --oneline -1'
}

step_readme() {
    step_clone || return 1
    # the README's "Two commands", as written
    local cmds words
    cmds=$(sed -n '/^## Two commands/,/^## /p' "$root_dir/README.md" | grep -E '^    \./scripts/' | sed 's/#.*//')
    [[ -n $cmds ]] || return 1
    read -ra words <<<"${cmds//$'\n'/ }"
    log "README: ${words[*]}"
    # each line a command, with a ";" after it
    in_root bash -lc "set -e; cd ~/libb2nd; ${cmds//$'\n'/$';\n'};"
}
step_demo() {
    step_clone || return 1
    in_root bash -lc "set -e; cd ~/libb2nd; ./scripts/demo.sh"
}

step_install() {
    in_root bash -lc "[ -d ~/libb2nd ] || git clone -q /mnt/origin ~/libb2nd; cd ~/libb2nd && ./scripts/install.sh $PREFIX_IN && ls $PREFIX_IN/lib" || return 1
    # every client starts from this machine: the README's prerequisites and the install only
    umounts || return 1
    rm -rf "$R.base" && cp -a "$R" "$R.base" && rm -rf "$R.base/root/libb2nd/target" || return 1
    mounts
}

fresh_copy() {  # the machine as the install step left it, for the next client
    [[ -d $R.base ]] || { echo "no $R.base: run the install step first" >&2; return 1; }
    umounts || return 1
    rm -rf "$R" && cp -a "$R.base" "$R" || return 1
    mounts
}

section() {  # NAME -> the docs/CLIENTS.md section whose heading starts with it
    awk -v h="## $1" 'index($0, h) == 1 {on = 1; print; next} on && /^## / {exit} on' "$root_dir/docs/CLIENTS.md"
}
recipe() {  # NAME -> the commands of its recipe
    case $1 in
        python-blosc2)
            # the README's "From Python" command, plus getting the sdist it builds and
            # installing the wheel, which the README says in words
            echo 'pip download --no-deps --no-binary blosc2 blosc2==4.14.1 && tar xzf blosc2-4.14.1.tar.gz'
            sed -n '/^\*\*From Python\*\*/,/^python-blosc2.s build clones/p' "$root_dir/README.md" | grep -E '^    ' | sed 's/^    //'
            echo 'pip install blosc2-4.14.1-*.whl' ;;
        *)  section "$(heading "$1")" | awk '/^```sh$/ && !done {on = 1; next} on && /^```$/ {on = 0; done = 1} on' ;;
    esac
}
heading() {
    case $1 in
        pytables) echo "PyTables" ;; hdf5plugin) echo "hdf5plugin" ;; h5zblosc2) echo "The HDF Group's H5Zblosc2" ;;
        hdf5-blosc2) echo "Blosc's HDF5-Blosc2" ;; imagecodecs) echo "imagecodecs" ;; caterva2) echo "caterva2" ;;
        phdf5) echo "Parallel HDF5" ;; adios2) echo "ADIOS2" ;;
    esac
}

step_client() {  # NAME
    local name=$1 apt text cmds pre=""
    if [[ $name == python-blosc2 ]]; then
        # shellcheck disable=SC2016  # the backquotes of a Markdown heading, in a sed address
        text=$(sed -n '/^\*\*From Python\*\*/,/^\*\*The `b2nd` tool/p' "$root_dir/README.md"; grep -A3 'The script needs' "$root_dir/docs/CONFORMANCE.md")
    else
        text=$(section "$(heading "$name")")
    fi
    [[ -n $text ]] || { echo "no section for $name" >&2; return 1; }
    cmds=$(recipe "$name" | grep -v '#.*a long run$')
    [[ -n $cmds ]] || { echo "no recipe for $name" >&2; return 1; }
    if [[ ($name == h5zblosc2 || $name == phdf5) && -d $MIRROR/HDFGroup+hdf5_plugins ]]; then
        # The mirror lacks blobs of other plugins' test files (JPEG/), so the commit cannot be
        # cloned from it: its BLOSC2/ tree stands in for the clone and checkout.
        cmds=$(printf '%s\n' "$cmds" | sed -E 's|^git clone https://github.com/HDFGroup/hdf5_plugins .*checkout ([0-9a-f]+)$|mkdir hdf5_plugins \&\& git -C /mnt/github-mirror/HDFGroup+hdf5_plugins/repo archive \1 BLOSC2 \| tar x -C hdf5_plugins|')
    fi
    apt=$(printf '%s\n' "$text" | tr '\n' ' ' | grep -oE 'apt-get install [a-z0-9 .+-]*[a-z0-9]' | sed 's/apt-get install//' | tr '\n' ' ')
    case $name in
        h5zblosc2)   # the recipe repacks an in.h5 of the user's; make one
            pre='python3 -c "import struct,sys; sys.stdout.buffer.write(b\"\".join(struct.pack(\"<i\", i % 1000) for i in range(100000)))" > in.bin
                 printf "PATH data\nINPUT-CLASS IN\nINPUT-SIZE 32\nINPUT-BYTE-ORDER LE\nRANK 2\nDIMENSION-SIZES 250 400\nOUTPUT-CLASS IN\nOUTPUT-SIZE 32\nCHUNKED-DIMENSION-SIZES 50 100\n" > in.cfg
                 h5import in.bin -c in.cfg -o in.h5' ;;
        hdf5-blosc2) # its sources come from the hdf5plugin sdist
            pre='pip download --no-deps --no-binary hdf5plugin hdf5plugin==7.1.0 && tar xzf hdf5plugin-7.1.0.tar.gz && cd hdf5plugin-7.1.0/lib/HDF5-Blosc2' ;;
        phdf5)       # the program is this repository's
            pre='export B2ND_SRC=~/libb2nd' ;;
        imagecodecs)
            # shellcheck disable=SC2016  # run later, in the fresh machine's shell
            pre='export BLOSC2_WHEEL=$(ls ~/clients/python-blosc2/blosc2-*.whl)' ;;
        caterva2)
            # shellcheck disable=SC2016  # run later, in the fresh machine's shell
            pre='export BLOSC2_WHEEL=$(ls ~/clients/python-blosc2/blosc2-*.whl) HDF5PLUGIN_WHEEL=$(ls ~/clients/hdf5plugin/wheels/hdf5plugin-*.whl)' ;;
    esac
    log "$name: apt-get install$apt"
    printf '%s\n' "$cmds" | sed 's/^/   | /' >&2
    in_root bash -c "set -e
        ${apt:+DEBIAN_FRONTEND=noninteractive apt-get install -y -q $apt}
        rm -rf ~/clients/$name && mkdir -p ~/clients/$name && cd ~/clients/$name
        python3 -m venv ~/clients/$name/venv && . ~/clients/$name/venv/bin/activate
        set -x
        $pre
        $cmds"
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=("${ALL[@]}")
failed=()
[[ ${steps[0]} == machine || -x $R/usr/bin/git ]] || die "no fresh machine yet: run the machine step first"
[[ ${steps[0]} == machine ]] || mounts
trap 'umounts || true' EXIT
for s in "${steps[@]}"; do
    log "step $s (log: $LOGS/$s.log)"
    start=$SECONDS
    case $s in
        machine) step_machine ;;
        readme)  step_readme ;;
        demo)    step_demo ;;
        install) step_install ;;
        python-blosc2|pytables|hdf5plugin|h5zblosc2|phdf5|adios2|hdf5-blosc2|imagecodecs|caterva2) fresh_copy && step_client "$s" ;;
        *) die "unknown step $s" ;;
    esac >"$LOGS/$s.log" 2>&1
    rc=$?
    log "step $s: $([[ $rc == 0 ]] && echo passed || echo "FAILED (exit $rc)") in $((SECONDS - start)) s"
    [[ $rc == 0 ]] || { failed+=("$s"); tail -n 15 "$LOGS/$s.log" >&2; }
done
[[ ${#failed[@]} == 0 ]] || { echo "failed steps: ${failed[*]}" >&2; exit 1; }
echo "all steps passed: ${steps[*]}"
