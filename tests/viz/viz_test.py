#!/usr/bin/env python3
"""Runs the visualizer's scripted scenarios in headless Chromium and checks them against keyplace-cli.

Usage: viz_test.py WASM_DIR KEYPLACE_CLI [SCREENSHOT_OUT]

WASM_DIR holds keyplace.mjs, keyplace_wasm.mjs, keyplace_wasm.wasm and the page (index.html,
viz.js, style.css). For each scenario the page (index.html?script=NAME) writes the documents
before and after one change, the moved fraction it measured and the text it shows for it;
`keyplace-cli snapshot diff` measures the same two documents, and both must agree. The ring-add
scenario is also saved as a screenshot (default WASM_DIR/viz-ring-add.png), which must show the ring.

Exit status: 0 all passed, 1 a check failed, 2 a usage error, 77 skipped (no Chromium).
"""

import decimal
import functools
import html
import http.server
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib

SKIP = 77
SCENARIOS = ["ring-add", "maglev-remove", "rendezvous-weight"]
PAGE_FILES = ["index.html", "viz.js", "style.css", "keyplace.mjs", "keyplace_wasm.mjs", "keyplace_wasm.wasm"]
CHROMIUM_TIMEOUT = 120  # seconds of real time per run; the page gets 20 s of virtual time
MIN_COLORED_PIXELS = 25000


class Failure(Exception):
    pass


class Handler(http.server.SimpleHTTPRequestHandler):
    # Browsers refuse a module script or streaming wasm compile served with another type.
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".wasm": "application/wasm",
        ".html": "text/html",
        ".css": "text/css",
    }

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")  # each run sees the files as they are now
        super().end_headers()

    def log_message(self, *args):
        pass


def start_server(root):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    for _ in range(50):  # ready when it answers
        try:
            with urllib.request.urlopen(base + "index.html", timeout=2) as r:
                if r.status == 200:
                    return server, base
        except OSError:
            time.sleep(0.1)
    server.shutdown()
    raise Failure(f"the http server on {base} did not answer")


def chromium_args(chrome, profile):
    # As root Chromium needs --no-sandbox; a fresh profile keeps runs from sharing a cache or a lock.
    return [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            f"--user-data-dir={profile}", "--virtual-time-budget=20000"]


def run_chromium(args):
    start = time.monotonic()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure(f"chromium did not finish in {CHROMIUM_TIMEOUT} s: {' '.join(args)}")
    return p, time.monotonic() - start


def page_result(chrome, profile, url):
    """The scenario's result object, from the DOM Chromium dumps, and the seconds it took."""
    p, seconds = run_chromium(chromium_args(chrome, profile) + ["--dump-dom", url])
    dom = p.stdout
    done = re.search(r'<body[^>]*\bdata-done="([^"]*)"', dom)
    pre = re.search(r'<pre id="result"[^>]*>(.*?)</pre>', dom, re.S)
    text = html.unescape(pre.group(1)) if pre else ""
    if not done:
        # Chromium's stderr is mostly D-Bus noise in a container: keep the rest.
        tail = "\n".join([l for l in p.stderr.splitlines() if "dbus" not in l.lower()][-5:])
        raise Failure(f"the page did not finish (no data-done on <body>; chromium exit {p.returncode}); "
                      f"#status: {element_text(dom, 'span', 'status')!r}; #error: {element_text(dom, 'div', 'error')!r}; "
                      f"#result: {text[:300]!r}; chromium stderr:\n{tail}")
    if done.group(1) != "1":
        raise Failure(f"the page reports an error: {text}")
    try:
        return json.loads(text), seconds
    except json.JSONDecodeError as e:
        raise Failure(f"#result is not JSON ({e}): {text[:300]!r}")


def element_text(dom, tag, id_):
    m = re.search(rf'<{tag} id="{id_}"[^>]*>(.*?)</{tag}>', dom, re.S)
    return html.unescape(m.group(1)).strip() if m else ""


def cli_diff(cli, before, after, tmp):
    paths = []
    for name, doc in (("before", before), ("after", after)):
        path = os.path.join(tmp, f"{name}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        paths.append(path)
    args = [cli, "snapshot", "diff", "--before", paths[0], "--after", paths[1], "--json"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise Failure(f"{' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    try:
        return json.loads(p.stdout)["movement"]
    except (json.JSONDecodeError, KeyError) as e:
        raise Failure(f"{' '.join(args)} printed no movement ({e!r}): {p.stdout[:300]!r}")


def shown_percent(fraction):
    """The page's text for a fraction: JavaScript's (100 * f).toFixed(4) + "%".

    toFixed rounds the double's exact value and takes the larger neighbour on a tie, which is
    ROUND_HALF_UP for these non-negative values; 100 * f is the same double in both languages.
    """
    exact = decimal.Decimal(100 * fraction)
    return f"{exact.quantize(decimal.Decimal('0.0001'), rounding=decimal.ROUND_HALF_UP)}%"


def check_documents(name, before, after):
    """The scenario did what it says: the strategy, the node counts, the one change."""
    b_nodes, a_nodes = before["nodes"], after["nodes"]
    b_ids, a_ids = [n["id"] for n in b_nodes], [n["id"] for n in a_nodes]
    strategy = {"ring-add": "ring", "maglev-remove": "maglev", "rendezvous-weight": "rendezvous"}[name]
    for label, doc in (("before", before), ("after", after)):
        if doc["strategy"]["name"] != strategy:
            raise Failure(f"the {label} document's strategy is {doc['strategy']['name']!r}, not {strategy!r}")
    if after["epoch"] <= before["epoch"]:
        raise Failure(f"epoch {before['epoch']} -> {after['epoch']} does not advance")
    if name == "ring-add":
        zones = {n.get("zone") for n in b_nodes}
        if before["strategy"]["params"].get("vnodes") != 160 or len(b_ids) != 5 or len(zones) != 3:
            raise Failure(f"before: want 160 vnodes and 5 nodes in 3 zones, got {before['strategy']['params']}, {b_ids}, {sorted(zones)}")
        if len(a_ids) != 6 or not set(b_ids) < set(a_ids):
            raise Failure(f"after: want the 5 nodes and a sixth, got {a_ids}")
    elif name == "maglev-remove":
        if before["strategy"]["params"].get("table-size") != 251 or len(b_ids) != 6:
            raise Failure(f"before: want table-size 251 and 6 nodes, got {before['strategy']['params']}, {b_ids}")
        if len(a_ids) != 5 or not set(a_ids) < set(b_ids):
            raise Failure(f"after: want 5 of the 6 nodes, got {a_ids}")
    else:
        if len(b_ids) != 5 or a_ids != b_ids:
            raise Failure(f"want the same 5 nodes before and after, got {b_ids} and {a_ids}")
        changed = [(b["id"], b["weight"], a["weight"]) for b, a in zip(b_nodes, a_nodes) if b["weight"] != a["weight"]]
        if len(changed) != 1 or changed[0][2] != 2:
            raise Failure(f"want one weight changed to 2, got {changed}")


def check_scenario(name, result, cli, tmp):
    if result.get("strategy") != result["after"]["strategy"]["name"]:
        raise Failure(f"result.strategy {result.get('strategy')!r} is not the after document's")
    check_documents(name, result["before"], result["after"])
    m = cli_diff(cli, result["before"], result["after"], tmp)
    # keyplace-cli writes the shortest decimal that reads back as the same double, and so does
    # JSON.stringify: the numbers must be equal, not close.
    for field in ("moved", "minimum"):
        if result[field] != m[field]:
            raise Failure(f"the page's {field} {result[field]!r} is not keyplace-cli's {m[field]!r}")
    if not m["moved"] > 0:
        raise Failure(f"the change moved nothing (keyplace-cli: {m['moved']!r})")
    want = shown_percent(m["moved"])
    if result["shown_moved"] != want:
        raise Failure(f"the page shows moved as {result['shown_moved']!r}, not {want!r} (keyplace-cli's moved {m['moved']!r})")
    return m


def png_rows(path):
    """(width, channels, rows of pixel bytes) of a non-interlaced 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", data[pos + 8:pos + 21])
        elif kind == b"IDAT":
            idat.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace:
        raise Failure(f"{path}: a PNG of depth {depth}, color type {color}, interlace {interlace} is not read here")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):  # undo each row's filter (PNG spec, section 9)
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride if kind else 0):  # kind 0: the row as stored
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            else:
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        prev = line
    return width, channels, rows


def colored_pixels(path):
    """Pixels of a strong color (channels spread by more than 60): the ring's arcs, far more than the
    swatches and bars of the rest of the page."""
    width, channels, rows = png_rows(path)
    count = 0
    for line in rows:
        for x in range(0, width * channels, channels):
            r, g, b = line[x], line[x + 1], line[x + 2]
            count += max(r, g, b) - min(r, g, b) > 60
    return count


def screenshot(chrome, profile, url, out):
    if os.path.exists(out):
        os.remove(out)  # an old picture must not pass for a new one
    p, seconds = run_chromium(chromium_args(chrome, profile) +
                              [f"--screenshot={os.path.abspath(out)}", "--window-size=1280,1000", url])
    if not os.path.exists(out):
        raise Failure(f"no screenshot at {out} (chromium exit {p.returncode}): {p.stderr.strip()[-300:]}")
    size = os.path.getsize(out)
    with open(out, "rb") as f:
        magic = f.read(8)
    if magic != b"\x89PNG\r\n\x1a\n":
        raise Failure(f"{out} is not a PNG")
    if size <= 10 * 1024:
        raise Failure(f"{out} is {size} bytes, not > 10 KB: the page drew nothing?")
    # At 1280x1000 the drawn ring alone has some 45000 such pixels; the page without it some 7500.
    colored = colored_pixels(out)
    if colored < MIN_COLORED_PIXELS:
        raise Failure(f"{out} has {colored} strongly colored pixels, not {MIN_COLORED_PIXELS}: no ring drawn?")
    return size, colored, seconds


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root, cli = os.path.abspath(argv[1]), argv[2]
    shot = argv[3] if len(argv) == 4 else os.path.join(root, "viz-ring-add.png")
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chrome:
        print("SKIP: neither chromium nor chromium-browser is on PATH", file=sys.stderr)
        return SKIP
    missing = [f for f in PAGE_FILES if not os.path.isfile(os.path.join(root, f))]
    if missing:
        print(f"FAIL: {root} lacks {', '.join(missing)}", file=sys.stderr)
        return 2
    if not os.access(cli, os.X_OK):
        print(f"FAIL: {cli} is not an executable keyplace-cli", file=sys.stderr)
        return 2

    failed = 0
    try:
        server, base = start_server(root)
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    try:
        with tempfile.TemporaryDirectory(prefix="viz-test-") as tmp:
            for name in SCENARIOS:
                url = f"{base}index.html?script={name}"
                try:
                    result, seconds = page_result(chrome, os.path.join(tmp, f"profile-{name}"), url)
                    m = check_scenario(name, result, cli, tmp)
                    print(f"PASS {name}: shows moved {result['shown_moved']} (keyplace-cli {m['moved']!r}), "
                          f"minimum {result['minimum']!r}; chromium {seconds:.1f} s")
                except Failure as e:
                    failed += 1
                    print(f"FAIL {name}: {e}")
                except (KeyError, TypeError) as e:  # a result without the fields the page must write
                    failed += 1
                    print(f"FAIL {name}: the page's result lacks {e!r}")
            try:
                size, colored, seconds = screenshot(chrome, os.path.join(tmp, "profile-shot"),
                                                    f"{base}index.html?script=ring-add", shot)
                print(f"PASS screenshot: {shot}, {size} bytes, {colored} colored pixels; chromium {seconds:.1f} s")
            except Failure as e:
                failed += 1
                print(f"FAIL screenshot: {e}")
    finally:
        server.shutdown()
        server.server_close()
    if failed:
        print(f"{failed} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
