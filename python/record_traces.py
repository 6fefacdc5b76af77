"""Records the demonstration traces of configs/human_traces/ through the web page: starts
`playforge serve`, opens the match-3 page in headless Chromium (Selenium, as the browser test
does) and plays each board to the end by clicking the board — a scripted clicker, not a person:
each "player" picks among the lit tiles by its own rule (the first, the last, the middle, or at
random from its own seed). The traces land where a person's would (traces/match3/ under the
served outputs folder) and are copied to the destination. They demonstrate `playforge humans`;
real players' traces are recorded the same way by playing the page.

Usage: .venv/bin/python python/record_traces.py [--boards 1,2,3] [--dest configs/human_traces/match3]
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", default="1,2,3", help="chance seeds, comma-separated")
    ap.add_argument("--dest", default=str(ROOT / "configs" / "human_traces" / "match3"))
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "playforge"))
    args = ap.parse_args()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    out = Path(tempfile.mkdtemp(prefix="playforge-traces-"))
    server = subprocess.Popen([args.bin, "serve", "--port", "0", "--outputs", str(out)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().split("open ")[1].split()[0].rstrip("/")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"]:
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=opts)
    rules = {
        "first": lambda lit, rng: lit[0],
        "last": lambda lit, rng: lit[-1],
        "middle": lambda lit, rng: lit[len(lit) // 2],
        "random": lambda lit, rng: lit[rng.randrange(len(lit))],
    }
    try:
        for board in [int(b) for b in args.boards.split(",")]:
            for k, (name, rule) in enumerate(rules.items()):
                rng = random.Random(board * 100 + k)
                d.get(f"{url}/play?game=match3&seats=human&seed={board}&start=1")
                while not d.find_elements(By.CSS_SELECTOR, "#board svg"):
                    time.sleep(0.05)
                while d.find_element(By.ID, "status").get_attribute("data-over") != "true":
                    before = d.find_element(By.ID, "history").text
                    lit = d.find_elements(By.CSS_SELECTOR, "#board g.touch[data-cell]")
                    rule(lit, rng).click()
                    if d.find_elements(By.CSS_SELECTOR, "#board .pick"):
                        lit = d.find_elements(By.CSS_SELECTOR, "#board g.touch[data-cell]")
                        rule(lit, rng).click()
                        if d.find_elements(By.CSS_SELECTOR, "#board .pick"):
                            d.find_elements(By.CSS_SELECTOR, "#moves button")[0].click()
                    t0 = time.time()
                    while d.find_element(By.ID, "history").text == before and time.time() - t0 < 20:
                        time.sleep(0.05)
                print(f"board {board}, clicker {name}: {d.find_element(By.ID, 'status').text}")
    finally:
        d.quit()
        server.terminate()
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted((out / "traces" / "match3").glob("*.json")):
        shutil.copy(f, dest / f.name)
        print("wrote", dest / f.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
