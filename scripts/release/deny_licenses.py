#!/usr/bin/env python3
"""Check deny.toml's license allow-list against what the release archives ship.

    deny_licenses.py

For each target of deny.toml's [graph], the crates linked into the library or the tool are
those licenses.py copies into an archive's licenses/. The allow-list must match them both ways:
- every shipped crate's license expression is satisfied by the allow-list;
- every license on the allow-list is needed: some shipped crate cannot be taken without it.
A license that only a build tool or a proc-macro's crate is under goes in an exception for
that crate, not on the list. Prints the shipped crates of each license; exits 1 on a mismatch.
"""
import os
import re
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import licenses  # (the sibling script, for its crate list)


def parse(expr):
    """An SPDX expression as nested tuples: ("or"|"and", [terms]) or a license id."""
    tokens = re.findall(r"\(|\)|[A-Za-z0-9.+\-]+", expr.replace("/", " OR "))
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def atom():
        if peek() == "(":
            take()
            e = disjunction()
            if take() != ")":
                raise ValueError(f"unbalanced: {expr}")
            return e
        lic = take()
        if peek() == "WITH":  # an exception only widens what the license permits
            take()
            take()
        return lic

    def conjunction():
        terms = [atom()]
        while peek() == "AND":
            take()
            terms.append(atom())
        return terms[0] if len(terms) == 1 else ("and", terms)

    def disjunction():
        terms = [conjunction()]
        while peek() == "OR":
            take()
            terms.append(conjunction())
        return terms[0] if len(terms) == 1 else ("or", terms)

    e = disjunction()
    if pos != len(tokens):
        raise ValueError(f"cannot parse: {expr}")
    return e


def satisfied(e, allowed):
    if isinstance(e, str):
        return e in allowed
    kind, terms = e
    return (any if kind == "or" else all)(satisfied(t, allowed) for t in terms)


def main():
    with open(os.path.join(licenses.ROOT, "deny.toml"), "rb") as f:
        deny = tomllib.load(f)
    allowed = set(deny["licenses"]["allow"])
    crates = {}
    for target in deny["graph"]["targets"]:
        for p in licenses.shipped(licenses.metadata(target)):
            if p["source"] is not None:
                crates[(p["name"], p["version"])] = p["license"] or ""
    bad = [f"{n} {v}: {lic or 'no license'}" for (n, v), lic in sorted(crates.items())
           if not lic or not satisfied(parse(lic), allowed)]
    needs = {lic: sorted(f"{n} {v}" for (n, v), e in crates.items() if not satisfied(parse(e), allowed - {lic}))
             for lic in sorted(allowed)}
    for lic, users in needs.items():
        print(f"{lic}: {', '.join(users) if users else 'NOT NEEDED by any shipped crate'}")
    print(f"{len(crates)} shipped crates over {len(deny['graph']['targets'])} targets")
    for b in bad:
        print(f"not allowed by deny.toml: {b}")
    unused = [lic for lic, users in needs.items() if not users]
    if bad or unused:
        sys.exit(1)


if __name__ == "__main__":
    main()
