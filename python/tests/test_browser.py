"""The pages in a real browser: Debian's Chromium, headless, driven by Selenium through
chromedriver. A balance run's report.html opens from disk (no server, no network) and its replay
viewer steps; `playforge serve` lists the games and runs; match-3 is played alone and Connect Four
against MCTS to the end by clicking the board and the move list; each saved trace replays through
the Python API to the same final state the page showed. Screenshots of every page land in
target/browser-artifacts/. Skipped with a clear line only where no browser is installed and the
test command did not ask for one (PLAYFORGE_REQUIRE_BROWSER=1, set by tests/run once
tests/browser-setup.sh has installed Chromium)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

ARTIFACTS = ROOT / "target" / "browser-artifacts"


def _browser_paths():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return chromium, driver


@pytest.fixture(scope="module")
def browser():
    chromium, driver = _browser_paths()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        chromium = None
    if not chromium or not driver:
        why = "no Chromium/chromedriver (tests/browser-setup.sh installs Debian's chromium and chromium-driver) or no selenium"
        if os.environ.get("PLAYFORGE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test: {why}, but PLAYFORGE_REQUIRE_BROWSER=1")
        pytest.skip(f"browser test skipped: {why}")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1100"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=driver), options=opts)
    d.set_page_load_timeout(60)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield d
    d.quit()


def _shot(d, name: str):
    d.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def _no_js_errors(d, where: str):
    errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, f"{where}: {errors}"


def _wait(cond, what: str, timeout: float = 30.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _command():
    """The playforge binary the Rust tests built (or $PLAYFORGE_BIN), else the package's CLI."""
    exe = Path(os.environ.get("PLAYFORGE_BIN", ROOT / "target" / "release" / "playforge"))
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "playforge"]


def _cli(args, **kw):
    cmd = _command()
    return subprocess.run(cmd + list(args), cwd=ROOT, check=True, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser-outputs")
    _cli(["balance", "configs/hexmage_balance.toml", "--out", str(out), "--quiet"])
    return out


@pytest.fixture(scope="module")
def server(outputs):
    p = subprocess.Popen(_command() + ["serve", "--port", "0", "--outputs", str(outputs), "--mcts-iterations", "200"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert "http://" in line, line + p.stderr.read()
    url = line.split("open ")[1].split()[0].rstrip("/")
    yield url
    p.terminate()
    p.wait(10)


def test_the_report_opens_from_disk_and_its_replay_viewer_steps(browser, outputs):
    from selenium.webdriver.common.by import By

    page = outputs / "hexmage_balance" / "cma-seed-1" / "report.html"
    browser.get(page.as_uri())
    assert "playforge report" in browser.title
    charts = browser.find_elements(By.CSS_SELECTOR, ".chart svg")
    assert charts and charts[0].size["width"] > 200, "the convergence chart is drawn"
    info = browser.find_element(By.ID, "rp-info")
    assert info.text.startswith("move 0 of"), info.text
    for _ in range(3):
        browser.find_element(By.ID, "rp-next").click()
    assert info.text.startswith("move 3 of"), info.text
    assert browser.find_elements(By.CSS_SELECTOR, "#rp-board svg polygon"), "the hex board is drawn"
    browser.find_element(By.ID, "rp-last").click()
    assert "result" in info.text
    _no_js_errors(browser, "report")
    _shot(browser, "report")


def _replays_to(trace_path: str, state_text: str):
    """The trace played again through the Python API ends in the state the page showed."""
    import playforge

    trace = json.loads(Path(trace_path).read_text())
    game = playforge.load_game(str(ROOT / trace["game"]))
    s = game.new_initial_state(seed=trace["chance_seed"])
    for name in trace["moves"]:
        acts = {s.action_to_string(a): a for a in s.legal_actions()}
        assert name in acts, f"{name} is not legal in the replay"
        s.apply_action(acts[name])
    assert s.is_terminal(), "the trace ends the game"
    assert str(s) == state_text
    return trace


def _play_page(browser, url: str, query: str):
    from selenium.webdriver.common.by import By

    browser.get(f"{url}/play?{query}&start=1")
    _wait(lambda: browser.find_element(By.ID, "status").text, "the first state")


def _state(browser):
    return browser.execute_script("return {over: document.getElementById('status').dataset.over, text: document.getElementById('state').textContent, trace: document.getElementById('trace').textContent};")


def test_match3_alone_and_connect_four_against_mcts_by_clicking(browser, server):
    from selenium.webdriver.common.by import By

    browser.get(server + "/")
    _wait(lambda: "connect_four" in browser.page_source, "the index page")
    assert "match3" in browser.page_source
    assert "hexmage_balance/cma-seed-1" in browser.page_source, "the run folder is listed"
    _shot(browser, "index")

    # Match-3 alone: click a lit tile, then (if several swaps share it) a second one.
    _play_page(browser, server, "game=match3&seats=human&seed=5")
    moves = 0
    while _state(browser)["over"] != "true":
        before = len(browser.find_element(By.ID, "history").text)
        lit = browser.find_elements(By.CSS_SELECTOR, "#board g.touch[data-cell]")
        assert lit, "some tile can be swapped"
        first = lit[0].get_attribute("data-cell")
        lit[0].click()
        # A click either plays the one swap through that tile (a request), or narrows the moves
        # to the swaps sharing it at once (the tile marked `pick`): then a partner tile.
        if browser.find_elements(By.CSS_SELECTOR, "#board .pick"):
            partner = [e for e in browser.find_elements(By.CSS_SELECTOR, "#board g.touch[data-cell]") if e.get_attribute("data-cell") != first]
            if partner:
                partner[0].click()
            if browser.find_elements(By.CSS_SELECTOR, "#board .pick"):
                browser.find_element(By.CSS_SELECTOR, "#moves button").click()
        _wait(lambda: len(browser.find_element(By.ID, "history").text) > before, "the move to be played")
        moves += 1
        if moves == 3:
            _shot(browser, "match3-mid")
        assert moves <= 60
    _shot(browser, "match3-end")
    st = _state(browser)
    trace = _replays_to(st["trace"].split("trace: ")[1], st["text"])
    assert trace["players"] == ["human"] and trace["chance_seed"] == 5 and len(trace["moves"]) == moves

    # Connect Four against MCTS: click the lit landing cell of a column.
    _play_page(browser, server, "game=connect_four&seats=human,mcts&seed=2")
    turns = 0
    while _state(browser)["over"] != "true":
        before = browser.find_element(By.ID, "history").text
        lit = browser.find_elements(By.CSS_SELECTOR, "#board g.touch[data-cell]")
        assert lit, "a column to drop into"
        lit[len(lit) // 2].click()
        _wait(lambda: browser.find_element(By.ID, "history").text != before, "the drop and the answer")
        turns += 1
        assert turns <= 30
    _shot(browser, "connect_four-end")
    st = _state(browser)
    trace = _replays_to(st["trace"].split("trace: ")[1], st["text"])
    assert trace["players"] == ["human", "mcts"]
    # Undo and restart by keyboard.
    from selenium.webdriver.common.keys import Keys

    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("r")
    _wait(lambda: browser.find_element(By.ID, "history").text == "", "the restart")
    body.send_keys(Keys.ENTER)
    _wait(lambda: browser.find_element(By.ID, "history").text != "", "a move by keyboard")
    body.send_keys("u")
    _wait(lambda: browser.find_element(By.ID, "history").text == "", "the undo")
    _no_js_errors(browser, "play")
