#!/usr/bin/env python3
"""Write a C program that prints the ABI facts of a set of Blosc2 headers.

The list of structs, fields and integer constants is read from the reference
c-blosc2 headers given as argument (so it is always complete); the program is
then compiled once against those headers and once against ours, and the two
outputs must be identical: every struct's sizeof and every field's offsetof
and size, and every integer constant's value.

  gen_abi_check.py REF_INCLUDE_DIR            the program (prints name=value lines)
  gen_abi_check.py --data REF_INCLUDE_DIR     the facts as one array, for targets
                                              that cannot run here (compiled to assembly)
  gen_abi_check.py --names REF_INCLUDE_DIR    the facts' names, in the array's order
"""
import re
import sys
from pathlib import Path

HEADERS = ["blosc2.h", "b2nd.h", "blosc2/blosc2-stdio.h", "blosc2/codecs-registry.h",
           "blosc2/filters-registry.h", "blosc2/tuners-registry.h"]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


def structs(text):
    """(type name, [field names]) for every `typedef struct ... { } name;` and `struct name { }`."""
    out = []
    for m in re.finditer(r"typedef\s+struct\s*(\w*)\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.DOTALL):
        out.append((m.group(3), fields(m.group(2))))
    for m in re.finditer(r"(?<!typedef )\bstruct\s+(\w+)\s*\{(.*?)\}\s*;", text, flags=re.DOTALL):
        out.append(("struct " + m.group(1), fields(m.group(2))))
    return out


def fields(body):
    body = re.sub(r"#\s*if.*?#\s*endif", "", body, flags=re.DOTALL)
    names = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
        if fp:
            names.append(fp.group(1))
            continue
        m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl)
        if m:
            names.append(m.group(1))
    return names


def constants(text, strings):
    """Integer constants: enum members and #defines that are not strings (`strings` collects those)."""
    names = []
    simple = re.findall(r'^\s*#define\s+(\w+)\s+(\w+|"[^"]*")\s*$', text, flags=re.MULTILINE)
    for _ in range(3):  # aliases may come before the string they name
        for name, value in simple:
            if value.startswith('"') or value in strings:
                strings.add(name)
    for m in re.finditer(r"\benum\s*\{(.*?)\}", text, flags=re.DOTALL):
        body = re.sub(r"#\w+[^\n]*", "", m.group(1))
        for item in body.split(","):
            item = item.strip()
            if item:
                names.append(item.split("=")[0].strip())
    for m in re.finditer(r"^\s*#define\s+(\w+)\s+(.+)$", text, flags=re.MULTILINE):
        name, value = m.group(1), m.group(2).strip()
        if name in strings:
            continue
        if (re.fullmatch(r"[-+()\w\s*<>|&]+", value) and not re.search(r"[a-z]", value.replace("size_t", ""))
                and not name.startswith("BLOSC_BLOSC") and "_H" not in name[-2:]):
            names.append(name)
    return names


def facts(seen_structs, seen_consts):
    """(name, C expression) of every fact, in the order the program prints them."""
    out = []
    for name, fs in seen_structs:
        out.append((f"sizeof({name})", f"sizeof({name})"))
        for f in fs:
            out.append((f"{name}.{f} offset", f"offsetof({name}, {f})"))
            out.append((f"{name}.{f} size", f"sizeof((({name} *)0)->{f})"))
    for c in seen_consts:
        out.append((c, c))
    return out


def main():
    args = sys.argv[1:]
    mode = "program"
    if args and args[0] in ("--data", "--names"):
        mode = args.pop(0)[2:]
    ref = Path(args[0])
    seen_structs, seen_consts, strings = [], [], set()
    for h in HEADERS:
        text = strip_comments((ref / h).read_text())
        for s in structs(text):
            if s[0] not in [x[0] for x in seen_structs]:
                seen_structs.append(s)
        for c in constants(text, strings):
            if c not in seen_consts:
                seen_consts.append(c)
    if mode == "names":
        for name, _ in facts(seen_structs, seen_consts):
            print(name)
        return
    print('#include <stdio.h>\n#include <stddef.h>\n#include "blosc2.h"\n#include "b2nd.h"')
    print('#include "blosc2/codecs-registry.h"\n#include "blosc2/filters-registry.h"\n#include "blosc2/tuners-registry.h"')
    if mode == "data":
        # For a target that cannot run here: the facts as the values of one
        # array, which the target's compiler computes (read from its assembly
        # output, one `.quad` per fact, in the order of --names).
        print("const long long abi_facts[] = {")
        for name, expr in facts(seen_structs, seen_consts):
            print(f"  (long long)({expr}),  /* {name} */")
        print("};")
        return
    print("#define FIELD(T, f) printf(\"%s.%s offset=%zu size=%zu\\n\", #T, #f, offsetof(T, f), sizeof(((T *)0)->f))")
    print("int main(void) {")
    for name, fs in seen_structs:
        print(f'  printf("sizeof({name})=%zu\\n", sizeof({name}));')
        for f in fs:
            print(f"  FIELD({name}, {f});")
    for c in seen_consts:
        print(f'  printf("{c}=%lld\\n", (long long)({c}));')
    print("  return 0;\n}")
    print(f"/* {len(seen_structs)} structs, {sum(len(f) for _, f in seen_structs)} fields, {len(seen_consts)} constants */")


if __name__ == "__main__":
    main()
