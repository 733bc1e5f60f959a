"""Component table from phases_{2k,8k,32k}<suffix>.json (in the directory given, default docs/learn_memory; the suffix,
default none, picks a measured variant such as _dominance): bytes per document, totals, 8k->32k slopes, 100k projection."""
import json
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "docs/learn_memory"
SUFFIX = sys.argv[2] if len(sys.argv) > 2 else ""
MiB = 2 ** 20
runs = {n: json.load(open(f"{OUT}/phases_{k}{SUFFIX}.json")) for n, k in
        ((2000, "2k"), (8000, "8k"), (32000, "32k"))}


def comps(d):
    rows = {r["phase"]: r for r in d["rows"]}
    f = next(r["forest"] for r in d["rows"] if "forest" in r)
    end = rows["boost end"]
    sp = end["space"]
    base_heap = rows["imports"]["heap_in_use"]
    base = rows["imports"]["heap_in_use"] + rows["imports"]["mmapped"]
    # from _final on the space holds the labels alone (its links replace the caller's parents)
    held = sp["forest_labels"] if "forest_labels" in sp else f["labels_bytes"] + f["parents_bytes"]
    known = (held + sp["forest_links"] + sp["pattern_nodes"] + sp["child_scan"] + sp["pattern_documents"]
             + sp["occurrence_headers"])
    # the rest of malloc'd memory (heap + mmapped) minus the imports' and ~2 MiB of Python objects (vocab, classes)
    occ_list_heap = end["heap_in_use"] + end["mmapped"] - base - known - 2 * MiB
    c = {
        "forest labels (+ parents before _final; numpy, held by SearchSpace)": held,
        "forest links: next_sib (4 B), from _final parent and sibling distances (2 + 2 B); doc_start": sp["forest_links"],
        "pattern nodes (PNode 40 B, 64Ki chunks)": sp["pattern_nodes"],
        "child scan (Scan 8 B, capacity)": sp["child_scan"],
        "pattern documents pool_docs+pool_counts (capacity)": sp["pattern_documents"],
        "occurrence list headers (capacity; 24 B vectors, 16 B arena references from _arena on)": sp["occurrence_headers"],
        "occurrence list data + malloc overhead (the arena from _arena on)": occ_list_heap,
        "  of which data (reported; 8 B entries, from _final 4 B words)": sp["occurrence_lists"],
    }
    phases = {"read peak": rows["read_bact"]["VmHWM"], "start peak": rows["start"]["VmHWM"],
              "boost peak": max(r["VmHWM"] for r in d["rows"] if r["phase"].startswith("boost")),
              "imports": rows["imports"]["VmRSS"], "end RSS": end["VmRSS"]}
    return c, phases, sp, f


out = {n: comps(d) for n, d in runs.items()}
print(f"| component | 2k B/doc | 8k B/doc | 32k B/doc | 32k MiB | slope 8k->32k B/doc | 100k MiB (proj.) |")
print("|---|---|---|---|---|---|---|")
for k in out[32000][0]:
    v = {n: out[n][0][k] for n in out}
    slope = (v[32000] - v[8000]) / 24000
    proj = v[32000] + slope * 68000
    print(f"| {k} | {v[2000]/2000:,.0f} | {v[8000]/8000:,.0f} | {v[32000]/32000:,.0f} | {v[32000]/MiB:,.1f} | {slope:,.0f} | {proj/MiB:,.0f} |")
print()
print("| phase | 2k MiB | 8k MiB | 32k MiB | slope 8k->32k KiB/doc | 100k GiB (proj.) |")
print("|---|---|---|---|---|---|")
for k in out[32000][1]:
    v = {n: out[n][1][k] for n in out}
    slope = (v[32000] - v[8000]) / 24000
    print(f"| {k} | {v[2000]/MiB:,.1f} | {v[8000]/MiB:,.1f} | {v[32000]/MiB:,.1f} | {slope/1024:,.2f} | {(v[32000] + slope*68000)/2**30:,.2f} |")
print()
for n in out:
    sp, f = out[n][2], out[n][3]
    print(n, "nodes/doc", f["n_nodes"] / n, "patterns/doc", sp["patterns"] / n, "pool entries/doc", sp["pattern_document_entries"] / n,
          "held occ lists/doc", sp["occurrence_lists_held"] / n,
          "held occ words/doc" if "forest_labels" in sp else "held occ entries/doc",
          sp["occurrence_lists"] / (4 if "forest_labels" in sp else 8) / n)
