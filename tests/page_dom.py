#!/usr/bin/env python3
"""page_dom.py FILE: what the status page drew, from the DOM Chromium
dumped (chromium --dump-dom), as one JSON object on stdout:

  nodes   names of the node circles in the network picture
  links   one per line in the picture: a, b, classes, and the rates its
          label shows (ab: a to b, ba: back) in bit/s, or null
  guests  node -> the MACs of the guest boxes drawn under it
  apps    [src, dst] of each line in the application topology
  cells   the traffic matrix's non-empty cells
  points  section ("lcharts" or "icharts") -> chart name -> the number of
          points of each of its lines
"""
import json
import re
import sys
from html.parser import HTMLParser

UNIT = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
RATE = re.compile(r"(\S+)\u2192(\S+) ([0-9.]+)([kMGT]?)bit/s, back ([0-9.]+)([kMGT]?)bit/s")


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.section = None
        self.out = {"nodes": [], "links": [], "guests": {}, "apps": [],
                    "cells": 0, "points": {"lcharts": {}, "icharts": {}}}
        self.text = None	# the element whose text is being read
        self.chart = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if a.get("id") in ("net", "matrix", "apps", "lcharts", "icharts", "flows"):
            self.section = a["id"]
        if self.section == "net":
            if tag == "circle" and "node" in cls:
                self.out["nodes"].append(a.get("data-name"))
            elif tag == "line" and "link" in cls:
                self.out["links"].append({"a": a.get("data-a"), "b": a.get("data-b"),
                                          "classes": cls, "ab": None, "ba": None})
            elif tag == "rect" and "guest" in cls:
                self.out["guests"].setdefault(a.get("data-node"), []).append(a.get("data-mac"))
            elif tag == "text" and "rate" in cls:
                self.text = ["rate", ""]
        elif self.section == "apps" and tag == "line" and "app-edge" in cls:
            self.out["apps"].append([a.get("data-src"), a.get("data-dst")])
        elif self.section == "matrix" and tag == "td" and "cell" in cls:
            self.out["cells"] += 1
        elif self.section in ("lcharts", "icharts"):
            if tag == "div" and "chart" in cls:
                self.text = ["chart", ""]
            elif tag == "polyline" and self.chart is not None:
                self.out["points"][self.section][self.chart].append(int(a.get("data-points", "0")))

    def handle_data(self, data):
        if self.text is not None:
            self.text[1] += data

    def handle_endtag(self, tag):
        if self.text is None:
            return
        kind, s = self.text
        if kind == "rate" and tag == "text":
            self.text = None
            m = RATE.search(s)
            if m and self.out["links"]:
                link = self.out["links"][-1]
                if {m.group(1), m.group(2)} == {link["a"], link["b"]}:
                    ab = float(m.group(3)) * UNIT[m.group(4)]
                    ba = float(m.group(5)) * UNIT[m.group(6)]
                    if m.group(1) != link["a"]:
                        ab, ba = ba, ab
                    link["ab"], link["ba"] = ab, ba
        elif kind == "chart" and tag == "div":
            # The chart's title is its first inner div.
            self.text = None
            self.chart = s.strip()
            self.out["points"][self.section][self.chart] = []


def main():
    p = Page()
    with open(sys.argv[1], encoding="utf-8") as f:
        p.feed(f.read())
    json.dump(p.out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
